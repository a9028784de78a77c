/** The MCP endpoints' HTTP side: DNS-rebinding protection (Host and Origin checks) and the token rule. */

import { Hono } from "hono";
import { requireToken } from "../../server/auth.ts";
import { allowHosts, hostRule, type HostSettings } from "../../server/origin.ts";
import { StationError } from "../../errors.ts";
import type { McpSessions } from "./sessions.ts";
import { type McpAuthSettings, mcpToken } from "./token.ts";

/**
 * The Hono app of one MCP port: Host and Origin checks (DNS-rebinding protection, as the MCP transport spec
 * asks; the API's rule), the token check, then `/mcp` answered by the sessions.
 */
export function mcpApp(server: McpAuthSettings & HostSettings, sessions: McpSessions): Hono {
  const app = new Hono();
  app.use("*", allowHosts(hostRule(server)));
  const token = mcpToken(server);
  if (token) app.use("*", requireToken(token, []));
  app.all("/mcp", (c) => sessions.handle(c.req.raw));
  app.notFound((c) =>
    c.json(
      new StationError("not_found", `no route for ${c.req.method} ${c.req.path}`, {
        hint: "the MCP endpoint is /mcp (Streamable HTTP)",
      }).toBody(),
      404,
    )
  );
  return app;
}
