import { requireRunnable } from "../../environments/agent_status.ts";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AgentRunRow } from "../../agents/run_rows.ts";
import {
  AgentNameParam,
  AgentRun,
  AgentRunGetQuery,
  AgentRunIdParam,
  AgentRunList,
  AgentRunListQuery,
  AgentToolCall,
  AgentToolCallParam,
  StartAgentRunBody,
  StartAgentRunQuery,
} from "../../contract/agent_runs.ts";
import { CassetteSchema } from "../../contract/cassette.ts";
import { startedHeaders, StartRunHeaders } from "../../contract/idempotency.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../contract/headers.ts";
import { CancelBody, RunEventsQuery } from "../../contract/runs.ts";
import { IdempotencyKeys, keyedStart } from "../../db/idempotency_keys.ts";
import { followAgentRunEvents } from "../../events/agent_run_events.ts";
import type { StationContext } from "../../context.ts";
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
      "agent_invalid",
      "agent_tools_pending",
      "agent_input_invalid",
      "agent_render_failed",
      "model_api_key_missing",
      "model_provider_unknown",
      "idempotency_key_reused",
      "agent_queue_unsupported",
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
  path: "/{run_id}",
  tags,
  summary: "An agent run with its turns and tool calls (outputs cut to 2 KB unless ?full=1)",
  request: { ...byRun, query: AgentRunGetQuery },
  responses: { 200: json(AgentRun, "the run"), ...errors("invalid_request", "agent_run_not_found") },
});
const getToolCall = createRoute({
  method: "get",
  path: "/{run_id}/tool-calls/{call_id}",
  tags,
  summary: "One tool call of an agent run, with its whole output",
  request: { params: AgentToolCallParam },
  responses: {
    200: json(AgentToolCall, "the call"),
    ...errors("agent_run_not_found", "agent_tool_call_not_found"),
  },
});
const getEvents = createRoute({
  method: "get",
  path: "/{run_id}/events",
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
  path: "/{run_id}/cassette",
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
  path: "/{run_id}/cancel",
  tags,
  summary: "Cancel an agent run: its model call and running tool are aborted",
  request: { ...byRun, body: { content: { "application/json": { schema: CancelBody } } } },
  responses: {
    200: json(AgentRun, "the run"),
    ...errors("invalid_request", "agent_run_not_found", "agent_run_finished"),
  },
});

function requireRun(ctx: StationContext, runId: string): AgentRunRow {
  return ctx.agentRuns.require(runId);
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
      queue: body.queue,
      priority: body.priority,
    };
    const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
    const keyed = key === undefined ? undefined : keyedStart(key, "agent_run", request);
    const replay = (id: string) => ({
      run: requireRun(ctx, id),
      done: ctx.agents.wait(id, c.req.raw.signal),
    });
    const recorder = body.record
      ? await ctx.recordings.recorder({ agent: request.agent, environment: request.environment })
      : undefined;
    const started = await startOnce(c, {
      keys,
      keyed,
      read: replay,
      start: async (claim) => {
        // An invalid file or undiscovered tools: refused before a run exists, with the reason.
        await requireRunnable(ctx.db, ctx.config.paths.environments, {
          environment: request.environment,
          name: request.agent,
        });
        return await ctx.agents.start({
          ...request,
          traceId: /^[\da-f]{2}-([\da-f]{32})-/.exec(c.req.header("traceparent") ?? "")?.[1],
          claim,
          doubles: recorder && { record: recorder },
        });
      },
    });
    // A repeated Idempotency-Key answers the first run: its recording (if any) stays as it is.
    if (recorder && !ctx.recordings.has(started.run.id)) {
      ctx.recordings.keep(started.run.id, recorder);
    }
    const wait = ["1", "true"].includes(c.req.valid("query").wait ?? "");
    const row = wait ? await started.done : started.run;
    return c.json(ctx.agentRuns.view(row, wait), 201);
  });
  return app;
}

/** /api/v1/agent-runs: list, inspect, follow and cancel agent runs. */
export function agentRunRoutes(ctx: StationContext): OpenAPIHono {
  const runs = ctx.agentRuns;
  const app = router();
  openapi(app, listRuns, (c) => {
    const q = c.req.valid("query");
    const page = runs.list({
      agent: q.agent,
      workflowRunId: q.workflow_run_id,
      status: q.status,
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ runs: page.runs, next_cursor: page.nextCursor }, 200);
  });
  openapi(app, getRun, (c) => {
    const full = ["1", "true"].includes(c.req.valid("query").full ?? "");
    return c.json(runs.view(requireRun(ctx, c.req.valid("param").run_id), true, full), 200);
  });
  openapi(app, getToolCall, (c) => {
    const { run_id: runId, call_id: callId } = c.req.valid("param");
    requireRun(ctx, runId);
    return c.json(runs.toolCall(runId, callId), 200);
  });
  openapi(app, getEvents, (c) => {
    const run = requireRun(ctx, c.req.valid("param").run_id);
    return runEventsResponse(c, c.req.valid("query"), ctx, {
      lastSeq: () => runs.lastSeq(run.id),
      follow: (after, signal, live) => followAgentRunEvents(runs.ledger, run.id, { after, signal, live }),
    });
  });
  openapi(
    app,
    getCassette,
    (c) => c.json(ctx.recordings.cassette(c.req.valid("param").run_id), 200),
  );
  openapi(app, cancelRun, (c) => {
    const { run_id: runId } = c.req.valid("param");
    requireRun(ctx, runId);
    const row = ctx.agents.cancel(runId, c.req.valid("json").reason);
    return c.json(runs.view(row), 200);
  });
  return app;
}
