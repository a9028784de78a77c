/** Per-request observation: request ids, the access log, a server span and the request metrics. */

import type { Context, MiddlewareHandler } from "hono";
import { requestId } from "hono/request-id";
import { routePath } from "hono/route";
import { log } from "../log.ts";
import { withLogFields } from "../log_scope.ts";
import { observeRequest } from "../telemetry/metrics.ts";
import { inSpan, SpanKind } from "../telemetry/tracing.ts";
import { bodyFailure } from "../server/socket_answer.ts";

/** Health probes hit every few seconds: their access lines are debug, not info. */
const QUIET = new Set(["/health"]);

/** The matched route's pattern (`/api/v1/workflow-runs/:id`), never the raw path: metrics stay bounded. */
function routeOf(c: Context): string {
  const path = routePath(c);
  return path && path !== "/*" && path !== "*" ? path : "unmatched";
}

/**
 * Per request: an id (`X-Request-Id`, kept from the client when sane) on every log line it causes, a server
 * span continuing the caller's `traceparent`, the duration histogram by route, and one access log line.
 */
export function observeRequests(): MiddlewareHandler[] {
  const observe: MiddlewareHandler = (c, next) => {
    const started = performance.now();
    const method = c.req.method;
    return withLogFields(
      { request_id: c.get("requestId") },
      () =>
        inSpan(method, { "http.request.method": method, "url.path": c.req.path }, async (span) => {
          await next();
          const route = routeOf(c);
          // A request whose body failed on the wire got the answer written on its socket (or none).
          const status = bodyFailure(c)?.status ?? c.res.status;
          const seconds = (performance.now() - started) / 1000;
          span?.updateName(`${method} ${route}`);
          span?.setAttributes({ "http.route": route, "http.response.status_code": status });
          observeRequest(method, route, status, seconds);
          (QUIET.has(c.req.path) ? log.debug : log.info)("request", {
            method,
            path: c.req.path,
            route,
            status,
            ms: Math.round(seconds * 1000 * 10) / 10,
          });
        }, { kind: SpanKind.SERVER, parent: c.req.header("traceparent") ?? undefined }),
    );
  };
  return [requestId(), observe];
}
