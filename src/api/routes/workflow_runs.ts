import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { z } from "zod";
import { startedHeaders, StartRunHeaders } from "../../contract/idempotency.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../contract/headers.ts";
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
import { followRunEvents } from "../../events/run_events.ts";
import type { StationContext } from "../../context.ts";
import type { RunRow } from "../../workflows/engine/mod.ts";
import { startWorkflowRun } from "../../workflows/service.ts";
import { StationError } from "../../errors.ts";
import { startOnce } from "../idempotency.ts";
import { CassetteSchema } from "../../contract/cassette.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { runEventsResponse } from "../sse.ts";
import { addRerunRoutes } from "./workflow_reruns.ts";

type StartBody = z.output<typeof StartRunBody>;

/** Starts a run, once per Idempotency-Key: a retry with the key answers the run the first try started. */
async function start(ctx: RunRoutesContext, keys: IdempotencyKeys, c: Context, body: StartBody) {
  const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
  // One request however it is spelled: `workflowId` is the deprecated name of `workflow_id`, `save` is false
  // unless given (the stored workflow's own start route sends the same request).
  const { workflowId, ...named } = body;
  const canonical = { ...named, workflow_id: body.workflow_id ?? workflowId, save: body.save ?? false };
  const keyed = key === undefined ? undefined : keyedStart(key, "workflow_run", canonical);
  const { record, ...request } = body;
  const parts = record ? recordingParts(ctx) : undefined;
  const recorder = parts
    ? await parts.recordings.recorder(
      {
        workflow: body.workflow_id ?? body.workflowId ?? (body.definition as { id?: string } | undefined)?.id,
      },
    )
    : undefined;
  const run = await startOnce(c, {
    keys,
    keyed,
    read: (id) => requireRun(ctx, id),
    start: (claim) =>
      startWorkflowRun(ctx, {
        ...request,
        workflowId: body.workflow_id ?? body.workflowId,
        traceparent: c.req.header("traceparent"),
        trigger: { type: body.trigger },
        // Registered inside the creating transaction: no agent step can start before the recorder is in place.
        claim: recorder && parts ? parts.doubles.claimFor({ record: recorder }, claim) : claim,
      }),
  });
  if (recorder && parts && !parts.recordings.has(run.id)) parts.recordings.keep(run.id, recorder);
  return ctx.runs.view(run);
}

/**
 * What the run routes read: a full station's context, or a one-shot station's (src/runtime/one_shot.ts),
 * which runs no agents and so keeps no recordings.
 */
export type RunRoutesContext =
  & Pick<
    StationContext,
    | "config"
    | "db"
    | "engine"
    | "runs"
    | "workflows"
    | "references"
    | "sandbox"
    | "sandboxUnavailable"
    | "durable"
    | "shutdown"
  >
  & Partial<Pick<StationContext, "recordings" | "agents">>;

/** The station's recordings and agent doubles, which a one-shot station (no agents) never has. */
function recordingParts(ctx: RunRoutesContext) {
  if (!ctx.recordings || !ctx.agents) {
    throw new StationError("internal_error", "this station runs no agents, so it records no runs", {
      hint: "record runs on a full station (`stn serve`); a one-shot command that records starts one",
    });
  }
  return { recordings: ctx.recordings, doubles: ctx.agents.doubles };
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
    const body = { ...c.req.valid("json"), workflow_id: c.req.valid("param").id, save: false };
    return c.json(await start(ctx, keys, c, body), 201);
  });
}

/** The run or a 404. */
export function requireRun(ctx: Pick<RunRoutesContext, "runs">, runId: string): RunRow {
  return ctx.runs.require(runId);
}

const byRun = { params: RunIdParam };
const startRun = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Start a run: of a stored workflow (workflow_id, version) or, once, of an inline definition",
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
  path: "/{run_id}",
  tags,
  summary: "A run",
  request: byRun,
  responses: { 200: json(Run, "the run"), ...errors("run_not_found") },
});
const getSteps = createRoute({
  method: "get",
  path: "/{run_id}/steps",
  tags,
  summary: "Every step attempt of a run",
  request: byRun,
  responses: { 200: json(StepList, "the attempts, in order"), ...errors("run_not_found") },
});
const getEvents = createRoute({
  method: "get",
  path: "/{run_id}/events",
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
  path: "/{run_id}/cassette",
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
  path: "/{run_id}/cancel",
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
    path: `/{run_id}/${verb}`,
    tags,
    summary: `${verb === "pause" ? "Pause" : "Resume"} a run`,
    request: byRun,
    responses: {
      200: json(Run, "the run"),
      ...errors("run_not_found", "run_finished", ...(verb === "resume" ? ["run_not_paused" as const] : [])),
    },
  });

/** /api/v1/workflow-runs: start, list, inspect, follow and control runs. */
export function workflowRunRoutes(ctx: RunRoutesContext): OpenAPIHono {
  const engine = ctx.engine;
  const app = router();
  const keys = new IdempotencyKeys(ctx.db);

  openapi(app, startRun, async (c) => c.json(await start(ctx, keys, c, c.req.valid("json")), 201));
  addRerunRoutes(ctx, app);

  openapi(app, listRuns, (c) => {
    const q = c.req.valid("query");
    const page = ctx.runs.list({
      workflowId: q.workflow_id,
      status: q.status,
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ runs: page.runs, next_cursor: page.nextCursor }, 200);
  });

  openapi(app, getRun, (c) => {
    const run = requireRun(ctx, c.req.valid("param").run_id);
    const waiting = ctx.runs.waitingFor(run);
    const forks = ctx.runs.forks(run.id).map((f) => f.run_id);
    return c.json({
      ...ctx.runs.view(run),
      ...(waiting ? { waiting_for: waiting } : {}),
      definition: JSON.parse(run.definition),
      forks,
    }, 200);
  });
  openapi(
    app,
    getCassette,
    (c) => c.json(recordingParts(ctx).recordings.cassette(c.req.valid("param").run_id), 200),
  );

  openapi(app, getSteps, (c) => {
    const run = requireRun(ctx, c.req.valid("param").run_id);
    return c.json({ steps: ctx.runs.steps(run.id, { waitingFor: true }) }, 200);
  });

  openapi(app, getEvents, (c) => {
    const run = requireRun(ctx, c.req.valid("param").run_id);
    return runEventsResponse(c, c.req.valid("query"), ctx, {
      lastSeq: () => ctx.runs.lastSeq(run.id),
      follow: (after, signal, live) => followRunEvents(engine, run.id, { after, signal, live }),
    });
  });

  openapi(app, cancelRun, (c) => {
    const { run_id: runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(ctx.runs.view(engine.cancel(runId, c.req.valid("json").reason)), 200);
  });
  openapi(app, control("pause"), (c) => {
    const { run_id: runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(ctx.runs.view(engine.pause(runId)), 200);
  });
  openapi(app, control("resume"), async (c) => {
    const { run_id: runId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(ctx.runs.view(await engine.resume(runId)), 200);
  });
  return app;
}
