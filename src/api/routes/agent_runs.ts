import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AgentRunRow } from "../../agents/run_rows.ts";
import { agentRunView } from "../../agents/views.ts";
import {
  AgentNameParam,
  AgentRun,
  AgentRunIdParam,
  AgentRunList,
  AgentRunListQuery,
  StartAgentRunBody,
  StartAgentRunQuery,
} from "../../contract/agent_runs.ts";
import { CassetteSchema } from "../../contract/cassette.ts";
import { IDEMPOTENCY_KEY_HEADER, startedHeaders, StartRunHeaders } from "../../contract/idempotency.ts";
import { CancelBody, RunEventsQuery } from "../../contract/runs.ts";
import { IdempotencyKeys, keyedStart } from "../../db/idempotency_keys.ts";
import { StationError } from "../../errors.ts";
import { followAgentRunEvents } from "../../events/agent_run_events.ts";
import type { StationContext } from "../../runtime/context.ts";
import { recordingSettings } from "../../testing/recordings.ts";
import { startOnce } from "../idempotency.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { runEventsResponse } from "../sse.ts";

const tags = ["agent runs"];
const startRun = createRoute({
  method: "post",
  path: "/{name}/runs",
  tags: ["agents"],
  summary: "Run an agent: answers the started run at once, or its end with ?wait=1",
  request: {
    params: AgentNameParam,
    query: StartAgentRunQuery,
    headers: StartRunHeaders,
    body: { content: { "application/json": { schema: StartAgentRunBody } } },
  },
  responses: {
    201: {
      ...json(AgentRun, "the run (ended, with ?wait=1); for a repeated Idempotency-Key, the run it started"),
      headers: startedHeaders,
    },
    ...errors(
      "invalid_json",
      "invalid_request",
      "agent_not_found",
      "agent_input_invalid",
      "agent_render_failed",
      "model_api_key_missing",
      "model_provider_unknown",
      "idempotency_key_reused",
    ),
  },
});
const byRun = { params: AgentRunIdParam };
const listRuns = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List agent runs, newest first, a page at a time",
  request: { query: AgentRunListQuery },
  responses: { 200: json(AgentRunList, "one page of runs"), ...errors("invalid_request") },
});
const getRun = createRoute({
  method: "get",
  path: "/{runId}",
  tags,
  summary: "An agent run with its turns and tool calls",
  request: byRun,
  responses: { 200: json(AgentRun, "the run"), ...errors("agent_run_not_found") },
});
const getEvents = createRoute({
  method: "get",
  path: "/{runId}/events",
  tags,
  summary: "The run's events as Server-Sent Events, resumable; ends after the run's terminal event",
  request: { ...byRun, query: RunEventsQuery },
  responses: {
    200: {
      description:
        "SSE: each message's `id` is the event's seq, `event` its type, `data` the AgentRunEvent JSON",
      content: { "text/event-stream": { schema: { type: "string" as const } } },
    },
    ...errors("agent_run_not_found", "invalid_cursor"),
  },
});
const getCassette = createRoute({
  method: "get",
  path: "/{runId}/cassette",
  tags,
  summary: "The recording of a run started with `record: true` (complete once the run has ended)",
  request: byRun,
  responses: {
    200: json(CassetteSchema, "the cassette (docs/testing.md#cassettes)"),
    ...errors("cassette_not_found"),
  },
});
const cancelRun = createRoute({
  method: "post",
  path: "/{runId}/cancel",
  tags,
  summary: "Cancel an agent run: its model call and running tool are aborted",
  request: { ...byRun, body: { content: { "application/json": { schema: CancelBody } } } },
  responses: {
    200: json(AgentRun, "the run"),
    ...errors("invalid_request", "agent_run_not_found", "agent_run_finished"),
  },
});

function requireRun(ctx: StationContext, runId: string): AgentRunRow {
  const run = ctx.agents.ledger.get(runId);
  if (!run) {
    throw new StationError("agent_run_not_found", `no agent run ${runId}`, {
      hint: "list runs with `stn agent runs`",
    });
  }
  return run;
}

/** POST /api/v1/agents/{name}/runs (mounted beside the agent definitions' routes). */
export function agentRunStartRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const keys = new IdempotencyKeys(ctx.db);
  openapi(app, startRun, async (c) => {
    const body = c.req.valid("json");
    const request = {
      agent: c.req.valid("param").name,
      environment: body.environment ?? ctx.config.values.workflows.environment,
      task: body.task,
      variables: body.variables,
    };
    const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
    const keyed = key === undefined ? undefined : keyedStart(key, "agent_run", request);
    const replay = (id: string) => ({
      run: requireRun(ctx, id),
      done: ctx.agents.wait(id, c.req.raw.signal),
    });
    const recorder = body.record
      ? await ctx.agents.recordings.recorder(
        { agent: request.agent, environment: request.environment },
        recordingSettings(ctx.config),
      )
      : undefined;
    const started = await startOnce(c, keys, keyed, replay, (claim) =>
      ctx.agents.start({
        ...request,
        traceId: /^[\da-f]{2}-([\da-f]{32})-/.exec(c.req.header("traceparent") ?? "")?.[1],
        claim,
        doubles: recorder && { record: recorder },
      }));
    // A repeated Idempotency-Key answers the first run: its recording (if any) stays as it is.
    if (recorder && !ctx.agents.recordings.has(started.run.id)) {
      ctx.agents.recordings.keep(started.run.id, recorder);
    }
    const wait = ["1", "true"].includes(c.req.valid("query").wait ?? "");
    const row = wait ? await started.done : started.run;
    return c.json(agentRunView(ctx.agents.ledger, row, wait), 201);
  });
  return app;
}

/** /api/v1/agent-runs: list, inspect, follow and cancel agent runs. */
export function agentRunRoutes(ctx: StationContext): OpenAPIHono {
  const ledger = ctx.agents.ledger;
  const app = router();
  openapi(app, listRuns, (c) => {
    const q = c.req.valid("query");
    const page = ledger.list({
      agent: q.agent,
      workflowRunId: q.workflow_run_id,
      status: q.status,
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ runs: page.runs.map((r) => agentRunView(ledger, r)), next_cursor: page.nextCursor }, 200);
  });
  openapi(
    app,
    getRun,
    (c) => c.json(agentRunView(ledger, requireRun(ctx, c.req.valid("param").runId), true), 200),
  );
  openapi(app, getEvents, (c) => {
    const run = requireRun(ctx, c.req.valid("param").runId);
    return runEventsResponse(c, c.req.valid("query"), ctx, {
      lastSeq: () => ledger.lastSeq(run.id),
      follow: (after, signal, live) => followAgentRunEvents(ledger, run.id, after, signal, live),
    });
  });
  openapi(app, getCassette, (c) => c.json(ctx.agents.recordings.cassette(c.req.valid("param").runId), 200));
  openapi(app, cancelRun, (c) => {
    const { runId } = c.req.valid("param");
    requireRun(ctx, runId);
    const row = ctx.agents.cancel(runId, c.req.valid("json").reason);
    return c.json(agentRunView(ledger, row), 200);
  });
  return app;
}
