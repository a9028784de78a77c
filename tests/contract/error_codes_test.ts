import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES } from "../../src/error_codes.ts";
import { assert, assertEquals } from "../helpers/assert.ts";

const SRC = new URL("../../src/", import.meta.url).pathname;

function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [{ file: path.slice(SRC.length), text: readFileSync(path, "utf8") }] : [];
  });
}

const files = sources(SRC);
// Where a code is chosen: new StationError("code", …), usageError("code", …), notFound("kind", …).
const CALL = /(?:new StationError|usageError)\(\s*"([a-z_]+)"|notFound\(\s*"([a-z]+)"/g;

Deno.test("errors: every code a StationError is made with is in the catalogue", () => {
  const unknown: string[] = [];
  for (const { file, text } of files) {
    for (const m of text.matchAll(CALL)) {
      const code = m[1] ?? `${m[2]}_not_found`;
      if (!Object.hasOwn(ERROR_CODES, code)) unknown.push(`${file}: ${code}`);
    }
  }
  assertEquals(unknown, [], "add each to src/error_codes.ts (one line: status, exit code, meaning)");
});

Deno.test("errors: every code in the catalogue is used somewhere in src, each with a status and a meaning", () => {
  const others = files.filter((f) => f.file !== "error_codes.ts").map((f) => f.text).join("\n");
  const kinds = new Set([...others.matchAll(/notFound\(\s*"([a-z]+)"/g)].map((m) => `${m[1]}_not_found`));
  const unused = Object.keys(ERROR_CODES).filter((code) => !others.includes(`"${code}"`) && !kinds.has(code));
  assertEquals(unused, [], "codes nothing uses: remove them from the catalogue");
  for (const [code, [status, exit, meaning]] of Object.entries(ERROR_CODES)) {
    assert(status >= 400 && status < 600 && [1, 2, 3, 4, 5, 75].includes(exit) && meaning.length > 10, code);
  }
});

Deno.test("docs/api.md: the error table is the catalogue, row for row", () => {
  const doc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` +\| (\d+) +\| (\d+) +\| (.+?) +\|$/gm)]
    .map((m) => [m[1], Number(m[2]), Number(m[3]), m[4]]);
  assertEquals(rows, Object.entries(ERROR_CODES).map(([code, entry]) => [code, ...entry]));
});
