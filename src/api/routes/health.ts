/** GET /health: each part the station depends on, and 503 when one is down. */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { Health, Version } from "../../contract/health.ts";
import { schemaVersion } from "../../db/migrate.ts";
import { within } from "../../lib/async.ts";
import { isAuthorized } from "../../server/auth.ts";
import type { StationContext } from "../../context.ts";
import { json, openapi, router } from "../openapi.ts";
import { errorMessage } from "../../errors.ts";

async function natsHealth(ctx: StationContext): Promise<Health["nats"]> {
  const base = { url: ctx.nats.url, managed: ctx.nats.managed, ...(ctx.nats.bin && { bin: ctx.nats.bin }) };
  if (ctx.nats.nc.isClosed()) return { ...base, status: "down", error: "connection closed" };
  try {
    const rtt = await within(ctx.nats.nc.rtt(), 2000, () => {
      throw new Error("no answer within 2s");
    });
    return { ...base, status: "ok", rtt_ms: Math.round(rtt * 100) / 100 };
  } catch (err) {
    return { ...base, status: "down", error: errorMessage(err) };
  }
}

function dbHealth(ctx: StationContext): Health["db"] {
  try {
    return { status: "ok", schema_version: schemaVersion(ctx.db) };
  } catch (err) {
    return { status: "down", error: errorMessage(err) };
  }
}

/** How full the file store is; a nearly full bucket warns (uploads fail once it is full) but is not "down". */
async function storageHealth(ctx: StationContext, natsUp: boolean): Promise<NonNullable<Health["storage"]>> {
  const max_bytes = ctx.files.settings.max_total_bytes;
  if (!natsUp) return { status: "unknown", max_bytes };
  try {
    const q = await within(ctx.files.quota(), 2000, () => {
      throw new Error("no answer within 2s");
    });
    if (!q.near_full) return { status: "ok", used_bytes: q.used_bytes, max_bytes };
    const pct = Math.round((q.used_bytes / max_bytes) * 100);
    return {
      status: "near_full",
      used_bytes: q.used_bytes,
      max_bytes,
      warning:
        `the file store is ${pct}% full; uploads fail once it is full: stn files prune, delete files, ` +
        "or raise storage.max_total_bytes",
    };
  } catch {
    return { status: "unknown", max_bytes };
  }
}

/** Checks every part the station depends on. */
export async function checkHealth(ctx: StationContext): Promise<Health> {
  const [db, nats] = [dbHealth(ctx), await natsHealth(ctx)];
  const storage = await storageHealth(ctx, nats.status === "ok");
  return {
    status: db.status === "ok" && nats.status === "ok" ? "ok" : "degraded",
    version: ctx.version,
    uptime_s: Math.round((Date.now() - ctx.startedAt.getTime()) / 1000),
    db,
    nats,
    storage,
  };
}

const getHealth = createRoute({
  method: "get",
  path: "/",
  tags: ["health"],
  summary: "Health of the station and each part (open without a token)",
  responses: { 200: json(Health, "every part is up"), 503: json(Health, "a part is down (see which)") },
});

/** GET /health: 200 when every part is up, 503 with details otherwise. */
export function healthRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, getHealth, async (c) => {
    const health = await checkHealth(ctx);
    // Open without a token: a caller without it (when one is required) does not learn where NATS listens.
    if (!isAuthorized(ctx.config.values.server, c.req.header("authorization"))) {
      delete health.nats.url;
      delete health.nats.bin;
    }
    return health.status === "ok" ? c.json(health, 200) : c.json(health, 503);
  });
  return app;
}

const getVersion = createRoute({
  method: "get",
  path: "/",
  tags: ["health"],
  summary: "The station's version and Deno's",
  responses: { 200: json(Version, "the versions") },
});

/** GET /api/v1/version */
export function versionRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, getVersion, (c) => c.json({ version: ctx.version, deno: Deno.version.deno }, 200));
  return app;
}
