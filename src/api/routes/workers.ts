import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { WorkerList } from "../../contract/workers.ts";
import type { StationContext } from "../../context.ts";
import { json, openapi, router } from "../openapi.ts";

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["workers"],
  summary: "Live `stn worker` processes: queues, concurrency, in-flight steps, last heartbeat",
  responses: { 200: json(WorkerList, "the live workers and the queues nobody serves") },
});

/** GET /api/v1/workers */
export function workerRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, list, (c) => {
    return c.json({
      workers: ctx.engine.workers(),
      local_workers: ctx.config.values.engine.workers,
      unserved: ctx.engine.unserved(),
      queued_agent_runs: ctx.agents.ledger.keys.queuedRuns().map((r) => ({ queue: r.queue, waiting: r.n })),
    }, 200);
  });
  return app;
}
