import { posix } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { basename, dirname, join, normalize, resolve } from "../../src/lib/path.ts";

// src/lib/path.ts stands in for node:path on the CLI's start: it must answer as node:path's posix functions do.
const PATHS = [
  "",
  ".",
  "..",
  "/",
  "//",
  "a",
  "a/",
  "a//b",
  "/a",
  "/a/",
  "a/b/c",
  "a/./b",
  "a/../b",
  "../a",
  "../../a/b",
  "/..",
  "/../a",
  "a/b/../../..",
  "./",
  "./a",
  "a/.",
  "a/..",
  "/a/b/..",
  ".a",
  "a.b/c.d",
  "/tmp/x y/z.txt",
];

Deno.test("lib/path: normalize, dirname and basename answer as node:path's posix ones", () => {
  for (const p of PATHS) {
    assertEquals(normalize(p), posix.normalize(p), `normalize(${JSON.stringify(p)})`);
    assertEquals(dirname(p), posix.dirname(p), `dirname(${JSON.stringify(p)})`);
    assertEquals(basename(p), posix.basename(p), `basename(${JSON.stringify(p)})`);
  }
});

Deno.test("lib/path: join and resolve answer as node:path's posix ones", () => {
  for (const a of PATHS) {
    for (const b of ["", "b", "/b", "../b", "b/", "./b/c"]) {
      assertEquals(join(a, b), posix.join(a, b), `join(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
      assertEquals(resolve(a, b), posix.resolve(a, b), `resolve(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
    }
    assertEquals(resolve(a), posix.resolve(a), `resolve(${JSON.stringify(a)})`);
  }
  assertEquals(join(), posix.join());
  assertEquals(resolve(), posix.resolve());
});
