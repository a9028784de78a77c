import type { MiddlewareHandler } from "hono";
import { StationError } from "../errors.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a state-changing request that a browser sends on behalf of another site (CSRF): the dashboard's
 * session cookie, and the open API on loopback, must not be usable by any page the user happens to visit.
 * Browsers say where a request comes from (`Sec-Fetch-Site`, else `Origin`); programs (the CLI, curl,
 * webhook senders) send neither and pass.
 */
export function refuseCrossSite(): MiddlewareHandler {
  return (c, next) => {
    if (SAFE.has(c.req.method)) return next();
    const site = c.req.header("sec-fetch-site");
    const origin = c.req.header("origin");
    const cross = site !== undefined
      ? site !== "same-origin" && site !== "none"
      : origin !== undefined && origin !== new URL(c.req.url).origin;
    if (cross) {
      throw new StationError("cross_site_request", `refused a ${c.req.method} sent from another site`, {
        hint: "browsers may change things only from stn's own pages (/ui); programs send no Origin header",
      });
    }
    return next();
  };
}
