import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import { assertEquals } from "./helpers/assert.ts";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

/** The files under dir whose names match kind (TypeScript unless told). */
function sources(dir = SRC, kind = /\.tsx?$/): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory ? sources(path, kind) : kind.test(path) ? [path] : [];
  });
}

/** The src-relative paths a file imports. */
function imports(file: string): string[] {
  const text = Deno.readTextFileSync(file);
  return [...text.matchAll(/from "(\.[^"]+)"/g)].map((m) => relative(SRC, join(file, "..", m[1])));
}

Deno.test("architecture: the CLI and the client reach the runtime over HTTP, never through api/, the engine or db/", () => {
  const forbidden = ["api/", "workflows/engine/", "db/"];
  const found = sources().filter((f) => /^(cli|client)\//.test(relative(SRC, f))).flatMap((f) =>
    imports(f).filter((i) => forbidden.some((p) => i.startsWith(p))).map((i) => `${relative(SRC, f)} → ${i}`)
  );
  assertEquals(found, []);
});

Deno.test("architecture: no file in src/ is over 400 lines (TypeScript and the supervisor's C)", () => {
  const long = sources(SRC, /\.(tsx?|c|h)$/).map((f) =>
    [relative(SRC, f), Deno.readTextFileSync(f).split("\n").length] as const
  )
    .filter(([, n]) => n > 400);
  assertEquals(long, []);
});

Deno.test("architecture: only src/mcp/client/ uses the MCP SDK's client (its .js subpaths type as any)", () => {
  const users = sources().filter((f) =>
    /["']@modelcontextprotocol\/sdk\/client/.test(Deno.readTextFileSync(f))
  )
    .map((f) => relative(SRC, f)).filter((f) => !f.startsWith("mcp/client/"));
  assertEquals(users, []);
});
