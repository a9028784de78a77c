/**
 * A small MCP server over stdio, to try MCP tools with stn (docs/mcp-servers.md): one tool, `now`, the
 * current time in a time zone. Run by stn as `deno run -A examples/mcp/clock_server.ts`; the full
 * `npm:` specifiers let it run from any folder. `CLOCK_LABEL` (from its config's `env`) prefixes answers.
 */
// deno-lint-ignore-file no-import-prefix -- an example run outside this repository, without its import map
import { McpServer } from "npm:@modelcontextprotocol/sdk@1.32.2/server/mcp.js";
import { StdioServerTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/server/stdio.js";
import { z } from "npm:zod@4.6.7";

const server = new McpServer({ name: "clock", version: "1.0.0" });
server.registerTool("now", {
  description: "The current date and time in a time zone (IANA name, default UTC)",
  inputSchema: { timezone: z.string().optional() },
}, ({ timezone }: { timezone?: string }) => {
  const zone = timezone ?? "UTC";
  try {
    const time = new Date().toLocaleString("sv-SE", { timeZone: zone });
    const label = Deno.env.get("CLOCK_LABEL");
    return { content: [{ type: "text" as const, text: `${label ? `${label}: ` : ""}${time} (${zone})` }] };
  } catch {
    return { content: [{ type: "text" as const, text: `unknown time zone ${zone}` }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
