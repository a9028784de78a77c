/**
 * A test MCP server over stdio: `deno run -A tests/helpers/mcp_stdio_server.ts [--prefix p_]`.
 * Its tools are described in tests/helpers/mcp_test_tools.ts (echo, big, fail, slow, was_cancelled,
 * mixed, env, pid). It writes `stn-test-mcp ready` to stderr when it is listening, which a client should
 * capture, not show, and appends a line `started` to the file named by `MCP_TEST_START_LOG` if set (to
 * see whether a server was started at all), and a line `<tool> <arguments JSON>` for every `tools/call`
 * request it receives to the file named by `MCP_TEST_CALL_LOG` if set (to see whether a call reached it).
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { testMcpServer } from "./mcp_test_tools.ts";

/** The path of this script, for configs that start it (`deno run -A <path>`). */
export const MCP_STDIO_SERVER = new URL(import.meta.url).pathname;

/** An `mcpServers` entry that starts this server (for an environment's config file). */
export function stdioServerEntry(options: { prefix?: string; env?: Record<string, string> } = {}): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  const prefix = options.prefix ? ["--prefix", options.prefix] : [];
  return {
    command: Deno.execPath(),
    args: ["run", "-A", MCP_STDIO_SERVER, ...prefix],
    env: options.env ?? {},
  };
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--prefix");
  const server = testMcpServer({ prefix: i >= 0 ? Deno.args[i + 1] : "" });
  const startLog = Deno.env.get("MCP_TEST_START_LOG");
  if (startLog) await Deno.writeTextFile(startLog, "started\n", { append: true });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const callLog = Deno.env.get("MCP_TEST_CALL_LOG");
  if (callLog) {
    const handle = transport.onmessage!;
    // Logged as it arrives, before the SDK checks the arguments: every call that reached the server.
    transport.onmessage = (message: Parameters<typeof handle>[0], extra?: Parameters<typeof handle>[1]) => {
      if ("method" in message && message.method === "tools/call") {
        const params = message.params as { name: string; arguments?: unknown };
        Deno.writeTextFileSync(callLog, `${params.name} ${JSON.stringify(params.arguments ?? null)}\n`, {
          append: true,
        });
      }
      handle(message, extra);
    };
  }
  console.error("stn-test-mcp ready");
}
