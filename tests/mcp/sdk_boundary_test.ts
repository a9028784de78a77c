import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import { assertEquals } from "../helpers/assert.ts";

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

function sources(dir = SRC): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

Deno.test("architecture: only src/mcp/server/sdk.ts uses the MCP SDK's server side (its .js subpaths type as any)", () => {
  const users = sources()
    .filter((f) => /["']@modelcontextprotocol\/sdk\/(server|types)/.test(Deno.readTextFileSync(f)))
    .map((f) => relative(SRC, f))
    .filter((f) => !f.startsWith("mcp/client/"));
  assertEquals(users, ["mcp/server/sdk.ts"]);
});
