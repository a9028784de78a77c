import type { HttpBindings } from "@hono/node-server";
import type { Context, MiddlewareHandler } from "hono";
import { isIP } from "node:net";
import { StationError } from "../errors.ts";
import { isLoopback } from "../lib/loopback.ts";

/**
 * The one rule for which Host and Origin a listening port answers (the API, the dashboard, event streams,
 * webhooks and both MCP ports use it). It stops DNS rebinding: a hostile page whose name is made to resolve
 * to 127.0.0.1 sends its own name as Host and as Origin, and is refused, whatever `Sec-Fetch-Site` says.
 */
export interface HostRule {
  /** The server listens on loopback only: loopback names and the configured ones are the only Hosts. */
  loopback: boolean;
  /** Host names accepted besides loopback ones (lowercase): server.host when it is a name, server.public_url's, server.allowed_hosts. */
  names: ReadonlySet<string>;
  /** server.public_url's origin: a browser page served through it (by a TLS proxy) may call the API. */
  publicOrigin?: string;
}

/** The server settings the rule is made from. */
export interface HostSettings {
  host: string;
  public_url?: string;
  allowed_hosts?: readonly string[];
}

const WILDCARD = new Set(["0.0.0.0", "::", "[::]"]);

/** The rule of a server listening on server.host, with its configured names. */
export function hostRule(server: HostSettings): HostRule {
  const names = new Set((server.allowed_hosts ?? []).map((name) => name.toLowerCase()));
  if (!WILDCARD.has(server.host) && isIP(server.host) === 0) names.add(server.host.toLowerCase());
  let publicOrigin: string | undefined;
  if (server.public_url) {
    const url = new URL(server.public_url);
    names.add(url.hostname);
    publicOrigin = url.origin;
  }
  return { loopback: isLoopback(server.host), names, publicOrigin };
}

// A Host header is a name or an IP (IPv6 in brackets) and an optional port; anything else (user info,
// a path, spaces) is refused rather than read leniently.
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/i;

/** The lowercase host name of a Host header value (IPv6 kept in brackets), or undefined if malformed. */
function hostnameOf(host: string): string | undefined {
  return HOST.exec(host)?.[1].toLowerCase();
}

/** True when the name may be a request's Host under the rule. */
function allowedName(rule: HostRule, name: string): boolean {
  if (isLoopback(name) || rule.names.has(name)) return true;
  // Off loopback an address typed as an IP is safe: rebinding needs a DNS name, which an IP is not.
  return !rule.loopback && isIP(name.replace(/^\[|\]$/g, "")) !== 0;
}

const HOST_HINT = (rule: HostRule) =>
  rule.loopback
    ? "on loopback stn answers only to localhost, 127.0.0.1 and [::1] (any port); to reach it by another name (a tunnel, a proxy), add that name to server.allowed_hosts or set server.public_url"
    : "address it by IP, or add the name to server.allowed_hosts (or set server.public_url to the address users open)";

const ORIGIN_HINT =
  "browser pages may call stn only from stn's own address, from this machine (http://localhost, 127.0.0.1, [::1]) or from server.public_url / server.allowed_hosts; programs send no Origin";

/** The refusal of a request's Host and Origin headers under the rule, or undefined when both are allowed. */
export function hostRefusal(
  rule: HostRule,
  host: string | undefined,
  origin: string | undefined,
): StationError | undefined {
  const name = host === undefined ? undefined : hostnameOf(host);
  if (name === undefined || !allowedName(rule, name)) {
    return new StationError(
      "host_not_allowed",
      host === undefined
        ? "the request has no Host header"
        : `Host ${JSON.stringify(host)} is not allowed here`,
      { hint: HOST_HINT(rule) },
    );
  }
  if (origin !== undefined && !allowedOrigin(rule, host!, origin)) {
    return new StationError("origin_not_allowed", `Origin ${JSON.stringify(origin)} is not allowed`, {
      hint: ORIGIN_HINT,
    });
  }
  return undefined;
}

/** A page's Origin: the server's own (same host and port), a loopback page over http, or a configured one. */
function allowedOrigin(rule: HostRule, host: string, origin: string): boolean {
  if (sameOrigin(rule, host, origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file:// page) and anything unparsable
  }
  if (url.protocol === "http:" && isLoopback(url.hostname)) return true;
  return (url.protocol === "http:" || url.protocol === "https:") && rule.names.has(url.hostname);
}

/**
 * True when the Origin is the page the request is addressed to: the same host and port (either scheme, as a
 * proxy may end TLS in front of stn), or server.public_url's origin.
 */
function sameOrigin(rule: HostRule, host: string, origin: string): boolean {
  if (origin === rule.publicOrigin) return true;
  const authority = /^https?:\/\/([^/]+)$/i.exec(origin)?.[1];
  return authority !== undefined && authority.toLowerCase() === host.toLowerCase();
}

/** The wire's Host header of a request that came over a socket; in-process calls (no socket) have none. */
function socketHost(c: Context): { host: string | undefined } | undefined {
  const incoming = (c.env as HttpBindings | undefined)?.incoming;
  return incoming ? { host: incoming.headers.host } : undefined;
}

/**
 * Refuses a request whose Host or Origin the rule does not allow: 403 host_not_allowed or origin_not_allowed,
 * with a hint naming the config key. Calls made in-process (the MCP ports' own client of the API) have no
 * socket and were checked where they came in.
 */
export function allowHosts(rule: HostRule): MiddlewareHandler {
  return async (c, next) => {
    const wire = socketHost(c);
    const refused = wire && hostRefusal(rule, wire.host, c.req.header("origin"));
    if (refused) return c.json(refused.toBody(), 403);
    await next();
  };
}

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a state-changing request that a browser sends on behalf of another site (CSRF): the dashboard's
 * session cookie, and the open API on loopback, must not be usable by any page the user happens to visit.
 * `Sec-Fetch-Site` may only refuse (cross-site, same-site); an `Origin`, when present, must be the server's
 * own whatever `Sec-Fetch-Site` claims. Programs (the CLI, curl, webhook senders) send neither and pass.
 */
export function refuseCrossSite(rule: HostRule): MiddlewareHandler {
  return (c, next) => {
    if (SAFE.has(c.req.method)) return next();
    const site = c.req.header("sec-fetch-site");
    const origin = c.req.header("origin");
    const cross = (site !== undefined && site !== "same-origin" && site !== "none") ||
      (origin !== undefined && !sameOrigin(rule, c.req.header("host") ?? new URL(c.req.url).host, origin));
    if (cross) {
      throw new StationError("cross_site_request", `refused a ${c.req.method} sent from another site`, {
        hint: "browsers may change things only from stn's own pages (/ui); programs send no Origin header",
      });
    }
    return next();
  };
}
