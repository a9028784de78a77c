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

/** Requires `Authorization: Bearer <token>` on every route except the open ones. */
export function bearerAuth(token: string, openPaths: readonly string[] = ["/health"]): MiddlewareHandler {
  return (c, next) => {
    if (openPaths.includes(c.req.path)) return next();
    const header = c.req.header("authorization") ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m || !tokenMatches(m[1].trim(), token)) {
      throw new StationError("unauthorized", m ? "invalid API token" : "missing API token", {
        status: 401,
        hint: "send 'Authorization: Bearer <token>' (the CLI reads STATION_API_TOKEN or server.api_token)",
      });
    }
    return next();
  };
}
