import { createHmac } from "node:crypto";
import { secretEqual } from "./secret_equal.ts";

/** The dashboard's session cookie (HttpOnly, SameSite=Strict; see docs/dashboard.md). */
export const SESSION_COOKIE = "stn_session";

/** How long a dashboard login lasts. */
export const SESSION_TTL_MS = 12 * 3_600_000;

function mac(token: string, expires: number): string {
  return createHmac("sha256", token).update(`stn dashboard session:${expires}`).digest("base64url");
}

/**
 * A session value: its expiry and an HMAC of it keyed by the API token. The cookie never holds the token
 * itself, it ends on its own, and changing the token ends every session; no server-side state is kept.
 */
export function newSession(token: string, now = Date.now()): string {
  const expires = now + SESSION_TTL_MS;
  return `${expires}.${mac(token, expires)}`;
}

/** True when `value` is an unexpired session made with `token`. */
export function validSession(token: string, value: string | undefined, now = Date.now()): boolean {
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,100})$/.exec(value ?? "");
  if (!m) return false;
  const expires = Number(m[1]);
  return expires > now && secretEqual(m[2], mac(token, expires));
}
