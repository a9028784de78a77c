import { lineDiff } from "../../src/testing/diff.ts";
import { assertEquals } from "../helpers/assert.ts";

Deno.test("lineDiff: equal texts give nothing; a changed line shows recorded (-) then now (+) with context", () => {
  const before = ["a", "b", "c", "d", "e", "f", "g"];
  assertEquals(lineDiff(before, [...before]), []);
  assertEquals(lineDiff(before, ["a", "b", "c", "D", "e", "f", "g"], 1), [
    "  …",
    "     3 | c",
    "-    4 | d",
    "+    4 | D",
    "     5 | e",
    "  …",
  ]);
});

Deno.test("lineDiff: added and removed lines, numbered on their own side; … marks hidden lines", () => {
  assertEquals(lineDiff(["x", "y"], ["x", "new", "y"], 0), ["  …", "+    2 | new", "  …"]);
  assertEquals(lineDiff(["x", "old", "y"], ["x", "y"]), ["     1 | x", "-    2 | old", "     2 | y"]);
  assertEquals(lineDiff([], ["only"]), ["+    1 | only"]);
});
