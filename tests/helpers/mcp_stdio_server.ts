/**
 * A test MCP server over stdio: `deno run -A tests/helpers/mcp_stdio_server.ts [--prefix p_]`.
 * Its tools are described in tests/helpers/mcp_test_tools.ts (echo, big, fail, slow, was_cancelled,
 * mixed, env). It writes `stn-test-mcp ready` to stderr when it is listening, which a client should
 * capture, not show.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { testMcpServer } from "./mcp_test_tools.ts";

/** The path of this script, for configs that start it (`deno run -A <path>`). */
export const MCP_STDIO_SERVER = new URL(import.meta.url).pathname;

if (import.meta.main) {
  const i = Deno.args.indexOf("--prefix");
  const server = testMcpServer({ prefix: i >= 0 ? Deno.args[i + 1] : "" });
  await server.connect(new StdioServerTransport());
  console.error("stn-test-mcp ready");
}
