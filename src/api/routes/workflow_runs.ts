import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { StationError } from "../../errors.ts";
import { followRunEvents } from "../../events/run_events.ts";
import type { StationContext } from "../../runtime/context.ts";
import { RUN_STATUSES, type RunRow } from "../../workflows/engine/ledger.ts";
import { runView, stepView } from "../../workflows/engine/views.ts";
import { startWorkflowRun } from "../../workflows/service.ts";
import { RequestTrigger } from "../../workflows/trigger.ts";
import { parseWith, readJson } from "../validate.ts";

const StartBody = z.strictObject({
  workflowId: z.string().min(1).optional(),
  version: z.int().min(1).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  /** A normalised definition to run as-is (what `stn workflow run file.yaml` sends when no store is present). */
  definition: z.unknown().optional(),
  /** Who starts the run, for `workflow.trigger`: the CLI sends `manual`; default `api`. */
  trigger: RequestTrigger.default("api"),
});

const ListQuery = z.object({
  workflow_id: z.string().optional(),
  status: z.enum(RUN_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional(),
});

async function start(ctx: StationContext, body: z.infer<typeof StartBody>, traceparent?: string) {
  return runView(await startWorkflowRun(ctx, { ...body, traceparent, trigger: { type: body.trigger } }));
}

/** POST /api/v1/workflows/:id/runs `{version?, input?}`: starts a run of a stored workflow. */
export function workflowStartRoutes(ctx: StationContext): Hono {
  return new Hono().post("/:id/runs", async (c) => {
    const body = await readJson(c, StartBody.omit({ workflowId: true, definition: true }));
    return c.json(
      await start(ctx, { ...body, workflowId: c.req.param("id") }, c.req.header("traceparent")),
      201,
    );
  });
}

/** The run or a 404. */
export function requireRun(ctx: StationContext, runId: string): RunRow {
  const run = ctx.engine.reads.runs.get(runId);
  if (!run) {
    throw new StationError("run_not_found", `no workflow run ${runId}`, {
      status: 404,
      hint: "list runs with `stn workflow runs`",
    });
  }
  return run;
}

/** /api/v1/workflow-runs: start, list, inspect, follow and control runs. */
export function workflowRunRoutes(ctx: StationContext): Hono {
  const engine = ctx.engine;
  const app = new Hono();

  app.post("/", async (c) => {
    const body = await readJson(c, StartBody);
    return c.json(await start(ctx, body, c.req.header("traceparent")), 201);
  });

  app.get("/", (c) => {
    const q = parseWith(ListQuery, c.req.query(), "query");
    const page = engine.reads.runs.list({
      workflowId: q.workflow_id,
      status: q.status,
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ runs: page.runs.map(runView), next_cursor: page.nextCursor });
  });

  app.get("/:runId", (c) => c.json(runView(requireRun(ctx, c.req.param("runId")))));

  app.get("/:runId/steps", (c) => {
    const run = requireRun(ctx, c.req.param("runId"));
    return c.json({ steps: engine.reads.attempts.list(run.id).map(stepView) });
  });

  app.get("/:runId/events", (c) => {
    const run = requireRun(ctx, c.req.param("runId"));
    const from = c.req.header("last-event-id") ?? c.req.query("after") ?? "0";
    let after: number;
    if (from === "now") after = engine.reads.events.lastSeq(run.id);
    else if (/^\d+$/.test(from)) after = Number(from);
    else {
      throw new StationError(
        "invalid_cursor",
        `after / Last-Event-ID must be a seq number or "now", got ${from}`,
        {
          status: 400,
        },
      );
    }
    return streamSSE(c, async (stream) => {
      const closed = new AbortController();
      stream.onAbort(() => closed.abort());
      const signal = AbortSignal.any([closed.signal, ctx.shutdown]);
      const live = c.req.query("follow") !== "false";
      for await (const e of followRunEvents(engine, run.id, after, signal, live)) {
        await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
      }
    });
  });

  app.post("/:runId/cancel", async (c) => {
    const body = await readJson(c, z.strictObject({ reason: z.string().optional() }));
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(engine.cancel(c.req.param("runId"), body.reason)));
  });
  app.post("/:runId/pause", (c) => {
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(engine.pause(c.req.param("runId"))));
  });
  app.post("/:runId/resume", async (c) => {
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(await engine.resume(c.req.param("runId"))));
  });
  return app;
}
