import type {
  AgentRun,
  AgentRunEvent,
  AgentRunList,
  AgentRunListQuery,
  StartAgentRunBody,
} from "../contract/agent_runs.ts";
import * as agentRunsAnswers from "./answers/agent_runs.ts";
import type { Cassette } from "../contract/cassette.ts";
import * as cassetteAnswers from "./answers/cassette.ts";
import { startIdempotently, type StationClient } from "./http.ts";
import { type FollowEventsOptions, followRunEvents } from "./sse.ts";

/** Calls of POST /api/v1/agents/{name}/runs and /api/v1/agent-runs. */

const runPath = (runId: string) => `/api/v1/agent-runs/${encodeURIComponent(runId)}`;

/**
 * POST /api/v1/agents/:name/runs (with `wait`, answered when the run has ended) under an Idempotency-Key
 * (`idempotencyKey`, else one made for this call): retried when the server was not reached or did not
 * answer in time, without ever starting two runs.
 */
export function startAgentRun(
  client: StationClient,
  agent: string,
  body: StartAgentRunBody,
  options: { wait?: boolean; signal?: AbortSignal; idempotencyKey?: string } = {},
): Promise<AgentRun> {
  return startIdempotently(
    options.idempotencyKey,
    (headers) =>
      client.json("POST", `/api/v1/agents/${encodeURIComponent(agent)}/runs`, {
        body,
        headers,
        query: { wait: options.wait ? "1" : undefined },
        answer: agentRunsAnswers.AgentRun,
        signal: options.signal,
      }),
    options.signal,
  );
}

/** GET /api/v1/agent-runs */
export function listAgentRuns(client: StationClient, query: AgentRunListQuery = {}): Promise<AgentRunList> {
  return client.json("GET", "/api/v1/agent-runs", { query, answer: agentRunsAnswers.AgentRunList });
}

/** GET /api/v1/agent-runs/:id (with its turns and tool calls; their whole outputs with `full`) */
export function getAgentRun(
  client: StationClient,
  runId: string,
  options: { full?: boolean } = {},
): Promise<AgentRun> {
  return client.json("GET", runPath(runId), {
    answer: agentRunsAnswers.AgentRun,
    query: { full: options.full ? "1" : undefined },
  });
}

/** GET /api/v1/agent-runs/:id/cassette: the recording of a run started with `record: true`. */
export function getAgentRunCassette(client: StationClient, runId: string): Promise<Cassette> {
  return client.json("GET", `${runPath(runId)}/cassette`, { answer: cassetteAnswers.Cassette });
}

/** POST /api/v1/agent-runs/:id/cancel */
export function cancelAgentRun(client: StationClient, runId: string, reason?: string): Promise<AgentRun> {
  return client.json("POST", `${runPath(runId)}/cancel`, {
    body: reason ? { reason } : {},
    answer: agentRunsAnswers.AgentRun,
  });
}

/** GET /api/v1/agent-runs/:id/events as an async iterator, resuming after `after`; ends after the run's end. */
export function agentRunEvents(
  client: StationClient,
  runId: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<AgentRunEvent> {
  return followRunEvents(client, `${runPath(runId)}/events`, agentRunsAnswers.AgentRunEvent, options);
}
