import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { StationError } from "../errors.ts";

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

// Hashing first makes the comparison constant-time whatever the lengths.
function digest(s: string): Uint8Array {
  return createHash("sha256").update(s).digest();
}

/** True when the presented token equals the expected one, compared in constant time. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token the API requires, or undefined when it is open (a loopback host, or no token set). */
export function requiredToken(server: { host: string; api_token?: string }): string | undefined {
  return !isLoopback(server.host) && server.api_token ? server.api_token : undefined;
}

/** The token an `Authorization: Bearer <token>` header presents, if it is one. */
function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1].trim();
}

/** True when the caller may use every route: the API is open, or the header presents its token. */
export function isAuthorized(
  server: { host: string; api_token?: string },
  header: string | undefined,
): boolean {
  const token = requiredToken(server);
  if (token === undefined) return true;
  const presented = bearerToken(header);
  return presented !== undefined && tokenMatches(presented, token);
}

/** Requires `Authorization: Bearer <token>` on every route except the open ones. */
export function bearerAuth(token: string, openPaths: readonly string[] = ["/health"]): MiddlewareHandler {
  return (c, next) => {
    if (openPaths.includes(c.req.path)) return next();
    const presented = bearerToken(c.req.header("authorization"));
    if (presented === undefined || !tokenMatches(presented, token)) {
      throw new StationError(
        "unauthorized",
        presented !== undefined ? "invalid API token" : "missing API token",
        {
          status: 401,
          hint: "send 'Authorization: Bearer <token>' (the CLI reads STATION_API_TOKEN or server.api_token)",
        },
      );
    }
    return next();
  };
}
