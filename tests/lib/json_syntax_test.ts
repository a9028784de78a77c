import { jsonSyntaxError } from "../../src/lib/json_syntax.ts";
import { assertEquals } from "../helpers/assert.ts";

Deno.test("jsonSyntaxError: the place and reason of the first error, where JSON.parse gives none", () => {
  const cases: Array<[string, string | undefined]> = [
    ['{\n  "s": {\n    "x": {"command": }\n  }\n}\n', "3:22 expected a value, found `}`"],
    ['{\n "a": 1,\n}', "3:1 expected a key (no comma before `}`), found `}`"],
    ["", "1:1 expected a value, found the end of the text"],
    ['{"a": "b', '1:7 a string is not closed (a missing `"`?)'],
    ['{"a": "x\ny"}', '1:7 a string runs past the end of its line (a missing `"`?)'],
    ['{"a": 1} x', "1:10 expected the end of the text, found `x`"],
    ["[1, 2,]", "1:7 expected a value, found `]`"],
    ['{"a" 1}', "1:6 expected `:` after the key, found `1`"],
    ["{a: 1}", "1:2 expected a key in double quotes, found `a`"],
    ['{"a": 1e5, "b": [true, null, -0.5, "\\"q"], "c": {}}', undefined],
  ];
  for (const [text, expected] of cases) {
    const e = jsonSyntaxError(text);
    assertEquals(e && `${e.line}:${e.column} ${e.message}`, expected, text);
    // The scanner agrees with JSON.parse on what is JSON.
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    assertEquals(valid, expected === undefined, text);
  }
});
