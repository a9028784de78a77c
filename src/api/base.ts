/**
 * What every API app shares, the station's full one (app.ts) and a one-shot station's (runs_app.ts): request
 * ids, access log, spans and metrics, host and token checks, body limits, answers held until the ledger is
 * durable, and the error shape.
 */

import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import type { LoadedConfig } from "../config/resolve.ts";
import { StationError, toStationError } from "../errors.ts";
import { log } from "../log.ts";
import { requiredToken, requireToken } from "../server/auth.ts";
import { allowHosts, hostRule, refuseCrossSite } from "../server/origin.ts";
import { bodyFailure } from "../server/socket_answer.ts";
import { requestBodyLimit } from "./body_limit.ts";
import { observeRequests } from "./observe.ts";

/** What the shared middleware reads of a station. */
export interface ApiStation {
  config: LoadedConfig;
  durable: () => Promise<void>;
}

/** An app with the shared middleware in place, and the API token it requires (if any). */
export function apiBase(ctx: ApiStation): { app: OpenAPIHono; token?: string } {
  const app = new OpenAPIHono();
  app.use("*", ...observeRequests());
  const token = requiredToken(ctx.config.values.server);
  // Before the token: a page rebinding its name to this machine is refused whether or not a token is needed.
  const hosts = hostRule(ctx.config.values.server);
  app.use("*", refuseCrossSite(hosts), allowHosts(hosts));
  if (token) app.use("*", requireToken(token));
  app.use("*", requestBodyLimit(ctx.config.values.server.max_body_bytes));
  // With `ledger.durability: fsync`, nothing is answered before the commits it may show are on disk. A
  // read shows what was committed before it, so that is synced first and its answer (maybe a stream
  // already flowing, which a wait after it would race) goes out as soon as it is ready; a write's
  // own commits are synced before it is answered.
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      await ctx.durable();
      return next();
    }
    await next();
    await ctx.durable();
  });
  return { app, token };
}

/** The answers for an unknown route and for a thrown error: the API's error body, logged when unexpected. */
export function answerErrors(app: OpenAPIHono): void {
  app.notFound((c) => {
    const err = new StationError("not_found", `no route for ${c.req.method} ${c.req.path}`, {
      hint: "the API reference lists every route: GET /api/docs, or /api/v1/openapi.json",
    });
    return c.json(err.toBody(), 404);
  });
  app.onError((thrown, c) => {
    // A middleware's own answer (bearer auth's 401 with WWW-Authenticate) goes out as it was made.
    if (thrown instanceof HTTPException && thrown.res) return thrown.getResponse();
    // A body the client cut off or sent malformed is its mistake: the answer it got, not a 500.
    const failed = bodyFailure(c);
    if (failed) return c.json(failed.toBody(), failed.status as 400);
    const err = thrown instanceof HTTPException
      ? new StationError("http_error", thrown.message || `HTTP ${thrown.status}`, { status: thrown.status })
      : toStationError(thrown);
    // Expected conditions (a full bucket is 507, a part down is 503) are answers, not server faults.
    if (!(thrown instanceof StationError) || err.status === 500) {
      log.error(`${c.req.method} ${c.req.path} failed`, { code: err.code, error: err.message });
    }
    return c.json(err.toBody(), err.status as 500);
  });
}
