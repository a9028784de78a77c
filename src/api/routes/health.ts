import { Hono } from "hono";
import { schemaVersion } from "../../db/migrate.ts";
import { within } from "../../lib/async.ts";
import { isAuthorized } from "../auth.ts";
import type { StationContext } from "../../runtime/context.ts";

/** The health of each part and of the whole. */
export interface Health {
  status: "ok" | "degraded";
  version: string;
  uptime_s: number;
  db: { status: "ok" | "down"; schema_version?: number; error?: string };
  /** `url` only for callers allowed on the rest of the API: the port is no business of anyone else. */
  nats: { status: "ok" | "down"; url?: string; managed: boolean; rtt_ms?: number; error?: string };
}

async function natsHealth(ctx: StationContext): Promise<Health["nats"]> {
  const base = { url: ctx.nats.url, managed: ctx.nats.managed };
  if (ctx.nats.nc.isClosed()) return { ...base, status: "down", error: "connection closed" };
  try {
    const rtt = await within(ctx.nats.nc.rtt(), 2000, () => {
      throw new Error("no answer within 2s");
    });
    return { ...base, status: "ok", rtt_ms: Math.round(rtt * 100) / 100 };
  } catch (err) {
    return { ...base, status: "down", error: (err as Error).message };
  }
}

function dbHealth(ctx: StationContext): Health["db"] {
  try {
    return { status: "ok", schema_version: schemaVersion(ctx.db) };
  } catch (err) {
    return { status: "down", error: (err as Error).message };
  }
}

/** Checks every part the station depends on. */
export async function checkHealth(ctx: StationContext): Promise<Health> {
  const [db, nats] = [dbHealth(ctx), await natsHealth(ctx)];
  return {
    status: db.status === "ok" && nats.status === "ok" ? "ok" : "degraded",
    version: ctx.version,
    uptime_s: Math.round((Date.now() - ctx.startedAt.getTime()) / 1000),
    db,
    nats,
  };
}

/**
 * GET /health: 200 when every part is up, 503 with details otherwise. It needs no token; a caller without
 * the API token (when one is required) does not learn where NATS listens.
 */
export function healthRoutes(ctx: StationContext): Hono {
  return new Hono().get("/", async (c) => {
    const health = await checkHealth(ctx);
    if (!isAuthorized(ctx.config.values.server, c.req.header("authorization"))) delete health.nats.url;
    return c.json(health, health.status === "ok" ? 200 : 503);
  });
}
