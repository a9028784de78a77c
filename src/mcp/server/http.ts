/** The MCP endpoints' HTTP side: DNS-rebinding protection (Host and Origin checks) and the token rule. */

import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { requireToken } from "../../server/auth.ts";
import { StationError } from "../../errors.ts";
import { isLoopback } from "../../lib/loopback.ts";
import type { McpSessions } from "./sessions.ts";
import { type McpAuthSettings, mcpToken } from "./token.ts";

/** The hostname of a Host header or an Origin (no port, IPv6 brackets kept as isLoopback reads them). */
function hostname(value: string): string | undefined {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

const refuse = (c: Context, message: string) =>
  c.json(
    new StationError("origin_not_allowed", message, {
      hint:
        "MCP clients that are not browsers send no Origin; a browser page may only come from this machine",
    }).toBody(),
    403,
  );

/**
 * DNS-rebinding protection (MCP transport spec): a browser page's Origin must be this machine or the
 * server's own address, and a server bound to loopback only answers requests addressed to a loopback
 * name, so a hostile page whose name resolves to 127.0.0.1 is refused.
 */
export function checkOrigin(server: { host: string }): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    if (isLoopback(server.host) && !isLoopback(hostname(host) ?? "")) {
      return refuse(
        c,
        `Host ${JSON.stringify(host)} is not a loopback name, and this server listens on loopback`,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      const name = hostname(origin);
      const sameHost = name !== undefined && origin.replace(/^[a-z]+:\/\//i, "") === host;
      if (!sameHost && !isLoopback(name ?? "")) {
        return refuse(c, `Origin ${JSON.stringify(origin)} is not allowed`);
      }
    }
    await next();
  };
}

/** The Hono app of one MCP port: origin and token checks, then `/mcp` answered by the sessions. */
export function mcpApp(server: McpAuthSettings, sessions: McpSessions): Hono {
  const app = new Hono();
  app.use("*", checkOrigin(server));
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
