/** The API's bearer-token rule: which routes are open, and the check on every other one. */

import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { getCookie } from "hono/cookie";
import { StationError } from "../errors.ts";
import { isLoopback } from "../lib/loopback.ts";
import { secretEqual } from "../lib/secret_equal.ts";
import { SESSION_COOKIE, validSession } from "../lib/session.ts";

const HINT = "send 'Authorization: Bearer <token>' (the CLI reads STATION_API_TOKEN or server.api_token)";

// Hono answers a malformed header 400; for a client it is one more way of not being authenticated.
const unauthorized = (message: string) => (c: Context) =>
  c.json(new StationError("unauthorized", message, { hint: HINT }).toBody(), 401);

/** Routes anyone may read: health for probes, and the API reference (a browser opening it sends no token). */
const OPEN_PATHS = ["/health", "/api/docs", "/api/v1/openapi.json"];

/** Webhooks carry their own signature instead of the token (checked by their route, docs/events.md). */
const HOOKS = "/api/v1/hooks/";

/** The dashboard guards its own pages (a login page instead of a 401: src/ui/guard.tsx). */
const isDashboard = (path: string) => path === "/ui" || path.startsWith("/ui/");

/** The token the API requires, or undefined when it is open (a loopback host, or no token set). */
export function requiredToken(server: { host: string; api_token?: string }): string | undefined {
  return !isLoopback(server.host) && server.api_token ? server.api_token : undefined;
}

/**
 * Requires `Authorization: Bearer <token>` on every route except the open ones (Hono's bearer auth:
 * constant-time comparison, 401 with `WWW-Authenticate`), answering stn's error body. A dashboard
 * session cookie counts as the token, so the dashboard's pages can call the API they show
 * (cross-site use of the cookie is refused by refuseCrossSite and SameSite=Strict).
 */
export function requireToken(token: string, openPaths: readonly string[] = OPEN_PATHS): MiddlewareHandler {
  const check = bearerAuth({
    token,
    noAuthenticationHeader: { message: unauthorized("missing API token") },
    invalidAuthenticationHeader: { message: unauthorized("malformed Authorization header") },
    invalidToken: { message: unauthorized("invalid API token") },
  });
  return (c, next) => {
    const path = c.req.path;
    if (openPaths.includes(path) || path.startsWith(HOOKS) || isDashboard(path)) return next();
    return validSession(token, getCookie(c, SESSION_COOKIE)) ? next() : check(c, next);
  };
}

/**
 * True when the caller may see everything (on an open route such as /health, which answers anyone):
 * the API is open, or the `Authorization` header presents its token.
 */
export function isAuthorized(
  server: { host: string; api_token?: string },
  header: string | undefined,
): boolean {
  const token = requiredToken(server);
  if (token === undefined) return true;
  const presented = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1].trim();
  return presented !== undefined && secretEqual(presented, token);
}
