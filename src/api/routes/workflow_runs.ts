import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { z } from "zod";
import { IDEMPOTENCY_KEY_HEADER, startedHeaders, StartRunHeaders } from "../../contract/idempotency.ts";
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
import { IdempotencyKeys, keyedStart } from "../../db/idempotency_keys.ts";
import { notFound } from "../../errors.ts";
import { followRunEvents } from "../../events/run_events.ts";
import type { StationContext } from "../../runtime/context.ts";
import type { RunRow } from "../../workflows/engine/ledger.ts";
import { runView, stepView } from "../../workflows/engine/views.ts";
import { startWorkflowRun } from "../../workflows/service.ts";
import { startOnce } from "../idempotency.ts";
import { recordingSettings } from "../../testing/recordings.ts";
import { CassetteSchema } from "../../contract/cassette.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { runEventsResponse } from "../sse.ts";

type StartBody = z.output<typeof StartRunBody>;

/** Starts a run, once per Idempotency-Key: a retry with the key answers the run the first try started. */
async function start(ctx: StationContext, keys: IdempotencyKeys, c: Context, body: StartBody) {
  const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
  const keyed = key === undefined ? undefined : keyedStart(key, "workflow_run", body);
  const { record, ...request } = body;
  const recordings = ctx.agents.recordings;
  const recorder = record
    ? await recordings.recorder(
      { workflow: body.workflowId ?? (body.definition as { id?: string } | undefined)?.id },
      recordingSettings(ctx.config),
    )
    : undefined;
  const run = await startOnce(c, keys, keyed, (id) => requireRun(ctx, id), (claim) =>
    startWorkflowRun(ctx, {
      ...request,
      traceparent: c.req.header("traceparent"),
      trigger: { type: body.trigger },
      // Registered inside the creating transaction: no agent step can start before the recorder is in place.
      claim: recorder ? ctx.agents.doubles.claimFor({ record: recorder }, claim) : claim,
    }));
  if (recorder && !recordings.has(run.id)) recordings.keep(run.id, recorder);
  return runView(run);
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
  "idempotency_key_reused",
);
const started = {
  ...json(Run, "the run, started (or, for a repeated Idempotency-Key, the run it started)"),
  headers: startedHeaders,
};
const startStored = createRoute({
  method: "post",
  path: "/{id}/runs",
  tags,
  summary: "Start a run of a stored workflow",
  request: {
    params: WorkflowIdParam,
    headers: StartRunHeaders,
    body: { content: { "application/json": { schema: StartStoredRunBody } } },
  },
  responses: { 201: started, ...startErrors },
});

/** POST /api/v1/workflows/{id}/runs `{version?, input?}`: starts a run of a stored workflow (added to the workflow routes). */
export function addWorkflowStartRoute(ctx: StationContext, app: OpenAPIHono): void {
  const keys = new IdempotencyKeys(ctx.db);
  openapi(app, startStored, async (c) => {
    const body = { ...c.req.valid("json"), workflowId: c.req.valid("param").id };
    return c.json(await start(ctx, keys, c, body), 201);
  });
}

/** The run or a 404. */
export function requireRun(ctx: StationContext, runId: string): RunRow {
  const run = ctx.engine.reads.runs.get(runId);
  if (!run) throw notFound("run", runId, "list runs with `stn workflow runs`");
  return run;
}

const byRun = { params: RunIdParam };
const startRun = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Start a run: of a stored workflow (workflowId, version) or of an inline definition",
  request: {
    headers: StartRunHeaders,
    body: { content: { "application/json": { schema: StartRunBody } } },
  },
  responses: { 201: started, ...startErrors },
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
const getCassette = createRoute({
  method: "get",
  path: "/{runId}/cassette",
  tags,
  summary: "The recording of a run started with `record: true` (complete once the run has ended)",
  request: byRun,
  responses: {
    200: json(
      CassetteSchema,
      "the cassette: every agent run of the workflow run (docs/testing.md#cassettes)",
    ),
    ...errors("cassette_not_found"),
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
  const keys = new IdempotencyKeys(ctx.db);

  openapi(app, startRun, async (c) => c.json(await start(ctx, keys, c, c.req.valid("json")), 201));

  openapi(app, listRuns, (c) => {
    const q = c.req.valid("query");
    const page = engine.reads.runs.list({
      workflowId: q.workflow_id,
      status: q.status,
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ runs: page.runs.map(runView), next_cursor: page.nextCursor }, 200);
  });

  openapi(app, getRun, (c) => c.json(runView(requireRun(ctx, c.req.valid("param").runId)), 200));
  openapi(app, getCassette, (c) => c.json(ctx.agents.recordings.cassette(c.req.valid("param").runId), 200));

  openapi(app, getSteps, (c) => {
    const run = requireRun(ctx, c.req.valid("param").runId);
    const served = engine.servedQueues();
    const steps = engine.reads.attempts.list(run.id).map((a) => {
      const why = engine.waitingFor(a, served);
      return why ? { ...stepView(a), waiting_for: why } : stepView(a);
    });
    return c.json({ steps }, 200);
  });

  openapi(app, getEvents, (c) => {
    const run = requireRun(ctx, c.req.valid("param").runId);
    return runEventsResponse(c, c.req.valid("query"), ctx, {
      lastSeq: () => engine.reads.events.lastSeq(run.id),
      follow: (after, signal, live) => followRunEvents(engine, run.id, after, signal, live),
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
