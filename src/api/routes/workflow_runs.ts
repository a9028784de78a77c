import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import type { z } from "zod";
import {
  CancelBody,
  Run,
  RunEventsQuery,
  RunIdParam,
  RunList,
  RunListQuery,
  StartRunBody,
  StartStoredRunBody,
  StepList,
} from "../../contract/runs.ts";
import { WorkflowIdParam } from "../../contract/workflows.ts";
import { notFound, StationError } from "../../errors.ts";
import { followRunEvents } from "../../events/run_events.ts";
import type { StationContext } from "../../runtime/context.ts";
import type { WorkflowDefinition } from "../../workflows/definition/schema.ts";
import { validateDefinition } from "../../workflows/definition/validate.ts";
import type { AttemptRow, RunRow } from "../../workflows/engine/ledger.ts";
import { runView, stepView } from "../../workflows/engine/views.ts";
import { errors, json, openapi, router } from "../openapi.ts";

type StartBody = z.output<typeof StartRunBody>;

/**
 * Resolves what to run: an inline definition is validated and registered in the store first (so
 * cron and CI can run a file with nothing synced); else the stored workflow (latest or `version`).
 */
function resolveDefinition(
  ctx: StationContext,
  body: StartBody,
): { definition: WorkflowDefinition; version: number } {
  if (body.definition !== undefined) {
    const checked = validateDefinition(body.definition);
    if (!checked.valid) {
      throw new StationError(
        "invalid_definition",
        `the workflow definition is invalid: ${
          checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
        }`,
        { status: 400, details: { errors: checked.errors }, hint: checked.errors[0]?.hint },
      );
    }
    const saved = ctx.workflows.save(checked.definition!, { source: "api" });
    return { definition: checked.definition!, version: saved.version };
  }
  if (!body.workflowId) {
    throw new StationError("invalid_request", "give workflowId (a stored workflow) or definition", {
      status: 400,
    });
  }
  const record = ctx.workflows.record(body.workflowId);
  if (record.status === "disabled") {
    throw new StationError("workflow_disabled", `workflow ${record.id} is disabled`, {
      status: 409,
      hint: `enable it first (stn workflow enable ${record.id})`,
    });
  }
  const stored = ctx.workflows.get(body.workflowId, body.version);
  return { definition: stored.definition, version: stored.version };
}

async function start(ctx: StationContext, body: StartBody, traceparent?: string) {
  const { definition, version } = resolveDefinition(ctx, body);
  return runView(
    await ctx.engine.startRun({ definition, workflowVersion: version, input: body.input, traceparent }),
  );
}

const tags = ["runs"];
const startErrors = errors(
  "invalid_json",
  "invalid_request",
  "invalid_definition",
  "input_invalid",
  "workflow_not_found",
  "workflow_version_not_found",
  "workflow_disabled",
);
const startStored = createRoute({
  method: "post",
  path: "/{id}/runs",
  tags,
  summary: "Start a run of a stored workflow",
  request: {
    params: WorkflowIdParam,
    body: { content: { "application/json": { schema: StartStoredRunBody } } },
  },
  responses: { 201: json(Run, "the run, started"), ...startErrors },
});

/** POST /api/v1/workflows/{id}/runs `{version?, input?}`: starts a run of a stored workflow (added to the workflow routes). */
export function addWorkflowStartRoute(ctx: StationContext, app: OpenAPIHono): void {
  openapi(app, startStored, async (c) => {
    const body = { ...c.req.valid("json"), workflowId: c.req.valid("param").id };
    return c.json(await start(ctx, body, c.req.header("traceparent")), 201);
  });
}

/** The run or a 404. */
export function requireRun(ctx: StationContext, runId: string): RunRow {
  const run = ctx.engine.ledger.getRun(runId);
  if (!run) throw notFound("run", runId, "list runs with `stn workflow runs`");
  return run;
}

const byRun = { params: RunIdParam };
const startRun = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Start a run: of a stored workflow (workflowId, version) or of an inline definition",
  request: { body: { content: { "application/json": { schema: StartRunBody } } } },
  responses: { 201: json(Run, "the run, started"), ...startErrors },
});
const listRuns = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List runs, newest first, a page at a time",
  request: { query: RunListQuery },
  responses: { 200: json(RunList, "one page of runs"), ...errors("invalid_request") },
});
const getRun = createRoute({
  method: "get",
  path: "/{runId}",
  tags,
  summary: "A run",
  request: byRun,
  responses: { 200: json(Run, "the run"), ...errors("run_not_found") },
});
const getSteps = createRoute({
  method: "get",
  path: "/{runId}/steps",
  tags,
  summary: "Every step attempt of a run",
  request: byRun,
  responses: { 200: json(StepList, "the attempts, in order"), ...errors("run_not_found") },
});
const getEvents = createRoute({
  method: "get",
  path: "/{runId}/events",
  tags,
  summary: "The run's events as Server-Sent Events, resumable; ends after the run's terminal event",
  request: { ...byRun, query: RunEventsQuery },
  responses: {
    200: {
      description: "SSE: each message's `id` is the event's seq, `event` its type, `data` the RunEvent JSON",
      content: { "text/event-stream": { schema: { type: "string" as const } } },
    },
    ...errors("run_not_found", "invalid_cursor"),
  },
});
const cancelRun = createRoute({
  method: "post",
  path: "/{runId}/cancel",
  tags,
  summary: "Cancel a run",
  request: { ...byRun, body: { content: { "application/json": { schema: CancelBody } } } },
  responses: {
    200: json(Run, "the run, canceled"),
    ...errors("invalid_request", "run_not_found", "run_finished"),
  },
});
const control = (verb: "pause" | "resume") =>
  createRoute({
    method: "post",
    path: `/{runId}/${verb}`,
    tags,
    summary: `${verb === "pause" ? "Pause" : "Resume"} a run`,
    request: byRun,
    responses: {
      200: json(Run, "the run"),
      ...errors("run_not_found", "run_finished", ...(verb === "resume" ? ["run_not_paused" as const] : [])),
    },
  });

/** /api/v1/workflow-runs: start, list, inspect, follow and control runs. */
export function workflowRunRoutes(ctx: StationContext): OpenAPIHono {
  const engine = ctx.engine;
  const app = router();

  openapi(
    app,
    startRun,
    async (c) => c.json(await start(ctx, c.req.valid("json"), c.req.header("traceparent")), 201),
  );

  openapi(app, listRuns, (c) => {
    const q = c.req.valid("query");
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.workflow_id) where.push("workflow_id = ?"), params.push(q.workflow_id);
    if (q.status) where.push("status = ?"), params.push(q.status);
    if (q.cursor) where.push("id < ?"), params.push(q.cursor);
    const rows = engine.ledger.all<RunRow>(
      `SELECT * FROM workflow_runs ${
        where.length ? "WHERE " + where.join(" AND ") : ""
      } ORDER BY id DESC LIMIT ?`,
      ...params,
      q.limit + 1,
    );
    const page = rows.slice(0, q.limit);
    return c.json({
      runs: page.map(runView),
      next_cursor: rows.length > q.limit ? page[page.length - 1].id : null,
    }, 200);
  });

  openapi(app, getRun, (c) => c.json(runView(requireRun(ctx, c.req.valid("param").runId)), 200));

  openapi(app, getSteps, (c) => {
    const run = requireRun(ctx, c.req.valid("param").runId);
    const rows = engine.ledger.all<AttemptRow>(
      "SELECT * FROM step_attempts WHERE run_id = ? ORDER BY id",
      run.id,
    );
    return c.json({ steps: rows.map(stepView) }, 200);
  });

  openapi(app, getEvents, (c) => {
    const run = requireRun(ctx, c.req.valid("param").runId);
    const from = c.req.header("last-event-id") ?? c.req.valid("query").after ?? "0";
    let after: number;
    if (from === "now") after = engine.ledger.lastSeq(run.id);
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
      const live = c.req.valid("query").follow !== "false";
      for await (const e of followRunEvents(engine, run.id, after, signal, live)) {
        await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
      }
    });
  });

  openapi(app, cancelRun, (c) => {
    const { runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(runView(engine.cancel(runId, c.req.valid("json").reason)), 200);
  });
  openapi(app, control("pause"), (c) => {
    const { runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(runView(engine.pause(runId)), 200);
  });
  openapi(app, control("resume"), async (c) => {
    const { runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(runView(await engine.resume(runId)), 200);
  });
  return app;
}
