import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import { assertEquals } from "./helpers/assert.ts";

// The typing rules of docs/design/layers.md#types that lint cannot see, kept by a scan.
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The TypeScript files of the project's own code (src/, tests/, scripts/, main.ts). */
function sources(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory) return e.name === "fixtures" ? [] : sources(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const FILES = [...["src", "tests", "scripts"].flatMap((d) => sources(join(ROOT, d))), join(ROOT, "main.ts")];
const SELF = fileURLToPath(import.meta.url);

/** `file:line` of every line matching pattern, this file aside (it names the patterns). */
function linesMatching(pattern: RegExp): string[] {
  return FILES.filter((f) => f !== SELF).flatMap((f) =>
    Deno.readTextFileSync(f).split("\n").flatMap((line, i) =>
      pattern.test(line) ? [`${relative(ROOT, f)}:${i + 1}`] : []
    )
  );
}

Deno.test("typing: nothing reads zod's internals (`._zod`); its public API (def, type, shape, instanceof) does", () => {
  assertEquals(linesMatching(/\._zod\b/), []);
});

Deno.test("typing: a caught error's message comes from errorMessage(err), not a cast to Error", () => {
  assertEquals(linesMatching(/\(\s*\w+\s+as\s+Error\s*\)\??\.message/), []);
});

Deno.test("typing: no-explicit-any is on, and each exception says why (`deno-lint-ignore no-explicit-any -- reason`)", () => {
  const lint = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).lint;
  assertEquals(JSON.stringify(lint?.rules?.exclude ?? []).includes("no-explicit-any"), false);
  assertEquals(linesMatching(/deno-lint-ignore(-file)? no-explicit-any(?!\s+--\s+\S)/), []);
});
