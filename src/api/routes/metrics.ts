/** GET /metrics: the station's Prometheus metrics, gauges read when scraped. */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import type { StationContext } from "../../context.ts";
import { processMetrics } from "../../telemetry/metrics.ts";
import { CONTENT_TYPE, exposition, type Family, gauge } from "../../telemetry/prometheus.ts";
import { openapi, router } from "../openapi.ts";

const metricsRoute = createRoute({
  method: "get",
  path: "/",
  tags: ["health"],
  summary: "Prometheus metrics (text format 0.0.4); the same token rule as the API",
  responses: {
    200: {
      description: "every metric (docs/observability.md lists them)",
      content: { "text/plain": { schema: z.string() } },
    },
  },
});

/** The station's gauges, read when scraped: queue, sandboxes, file store, task queues' workers. */
function stationGauges(ctx: StationContext): Family[] {
  // A part that cannot be read is NaN in this scrape (throwing would fail the whole page).
  const single = (name: string, help: string, read: () => Promise<number>) =>
    gauge(name, help, async () => [{ labels: [], value: await read().catch(() => NaN) }]);
  let queue: Promise<Awaited<ReturnType<StationContext["engine"]["queueInfo"]>>> | undefined;
  // One consumer-info call serves the three queue gauges of a scrape.
  const queueInfo = () => queue ??= ctx.engine.queueInfo().finally(() => setTimeout(() => queue = undefined));
  return [
    single(
      "stn_workflow_queue_pending",
      "Step messages waiting in the queue",
      async () => (await queueInfo()).pending,
    ),
    single(
      "stn_workflow_queue_ack_pending",
      "Step messages delivered to a worker and not yet acknowledged",
      async () => (await queueInfo()).ackPending,
    ),
    single(
      "stn_workflow_queue_redelivered",
      "Step messages delivered more than once and still unacknowledged (a worker died or stalled)",
      async () => (await queueInfo()).redelivered,
    ),
    single(
      "stn_sandboxes_active",
      "Open sandbox sessions",
      () => Promise.resolve(ctx.sandbox?.list().length ?? 0),
    ),
    single("stn_file_store_bytes", "Bytes the file store's bucket holds", () => ctx.files.usage()),
    single(
      "stn_ledger_syncs",
      "WAL syncs of the ledger since start",
      () => Promise.resolve(ctx.engine.syncs),
    ),
    single(
      "stn_workflow_steps_started",
      "Step executions this process started since start (and steps handed to stn workers)",
      () => Promise.resolve(ctx.engine.stats.started),
    ),
    single(
      "stn_workflow_steps_started_unsynced",
      "Of those, the ones that started before the commits they follow from were synced (0 under ledger.durability: step)",
      () => Promise.resolve(ctx.engine.stats.unsynced),
    ),
    perQueue(
      "stn_steps_waiting_for_worker",
      "Scheduled steps on a task queue that no live worker serves",
      () => new Map(ctx.engine.unserved().map((u) => [u.queue, u.waiting])),
    ),
    gauge(
      "stn_runs_waiting_for_concurrency",
      "Workflow runs waiting for a concurrency key, per workflow (keys' values are not labels: they are unbounded)",
      () =>
        ctx.engine.reads.concurrency.waitingRuns().map((r) => ({
          labels: [["workflow", r.workflow_id]],
          value: r.n,
        })),
    ),
    gauge(
      "stn_steps_waiting_for_concurrency",
      "Workflow steps waiting for a concurrency key, per workflow (their runs go on running; keys are not labels)",
      () =>
        ctx.engine.reads.concurrency.waitingSteps().map((r) => ({
          labels: [["workflow", r.workflow_id]],
          value: r.n,
        })),
    ),
    gauge(
      "stn_agent_runs_queued",
      "Agent runs on a task queue that no worker has taken yet, per queue (docs/workers.md#agent-runs-on-a-queue)",
      () =>
        ctx.agents.ledger.keys.queuedRuns().map((r) => ({
          labels: [["queue", r.queue]],
          value: r.n,
        })),
    ),
    gauge(
      "stn_agent_runs_waiting_for_concurrency",
      "Agent runs waiting for a concurrency key, per agent (keys' values are not labels: they are unbounded)",
      () =>
        ctx.agents.ledger.keys.waitingRuns().map((r) => ({
          labels: [["agent", r.agent]],
          value: r.n,
        })),
    ),
    perQueue("stn_workers", "Live stn worker processes taking steps from a task queue", () => {
      // A queue with steps waiting and nobody serving it reads 0, so an alert can match on the queue.
      const counts = new Map(ctx.engine.unserved().map((u) => [u.queue, 0]));
      for (const w of ctx.engine.workers()) {
        if (!w.draining) { for (const q of w.queues) counts.set(q, (counts.get(q) ?? 0) + 1); }
      }
      return counts;
    }),
  ];
}

/** A gauge with one sample per task queue, read when scraped (a queue gone since the last scrape is gone). */
function perQueue(name: string, help: string, read: () => Map<string, number>): Family {
  return gauge(
    name,
    help,
    () => [...read()].map(([queue, value]) => ({ labels: [["queue", queue]], value })),
  );
}

/** GET /metrics: the process's counters and histograms and the station's gauges, in Prometheus text format. */
export function metricsRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const families = [...processMetrics, ...stationGauges(ctx)];
  openapi(app, metricsRoute, async (c) => {
    const text = await exposition(families);
    // "Content-Type" as c.text spells it, so this one replaces its text/plain default.
    return c.text(text, 200, { "Content-Type": CONTENT_TYPE });
  });
  return app;
}
