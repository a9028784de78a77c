import {
  AgentRun,
  AgentRunEvent,
  AgentRunList,
  type AgentRunListQuery,
  type StartAgentRunBody,
} from "../contract/agent_runs.ts";
import { type Cassette, CassetteSchema } from "../contract/cassette.ts";
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
        schema: AgentRun,
        signal: options.signal,
      }),
    options.signal,
  );
}

/** GET /api/v1/agent-runs */
export function listAgentRuns(client: StationClient, query: AgentRunListQuery = {}): Promise<AgentRunList> {
  return client.json("GET", "/api/v1/agent-runs", { query, schema: AgentRunList });
}

/** GET /api/v1/agent-runs/:id (with its turns and tool calls) */
export function getAgentRun(client: StationClient, runId: string): Promise<AgentRun> {
  return client.json("GET", runPath(runId), { schema: AgentRun });
}

/** GET /api/v1/agent-runs/:id/cassette: the recording of a run started with `record: true`. */
export function getAgentRunCassette(client: StationClient, runId: string): Promise<Cassette> {
  return client.json("GET", `${runPath(runId)}/cassette`, { schema: CassetteSchema });
}

/** POST /api/v1/agent-runs/:id/cancel */
export function cancelAgentRun(client: StationClient, runId: string, reason?: string): Promise<AgentRun> {
  return client.json("POST", `${runPath(runId)}/cancel`, {
    body: reason ? { reason } : {},
    schema: AgentRun,
  });
}

/** GET /api/v1/agent-runs/:id/events as an async iterator, resuming after `after`; ends after the run's end. */
export function agentRunEvents(
  client: StationClient,
  runId: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<AgentRunEvent> {
  return followRunEvents(client, `${runPath(runId)}/events`, AgentRunEvent, options);
}
