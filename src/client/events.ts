import {
  type EventBody,
  EventList,
  SendEventAnswer,
  SignalAnswer,
  type SignalBody,
  SignalList,
} from "../contract/events.ts";
import type { StationClient } from "./http.ts";

/** Calls of /api/v1/events and a run's signals. */

const runPath = (runId: string) => `/api/v1/workflow-runs/${encodeURIComponent(runId)}`;

/** POST /api/v1/events */
export function sendEvent(client: StationClient, body: EventBody): Promise<SendEventAnswer> {
  return client.json("POST", "/api/v1/events", { body, schema: SendEventAnswer });
}

/** GET /api/v1/events */
export function listEvents(
  client: StationClient,
  query: { name?: string; limit?: number; cursor?: string } = {},
): Promise<EventList> {
  return client.json("GET", "/api/v1/events", { query, schema: EventList });
}

/** POST /api/v1/workflow-runs/:id/signal */
export function signalRun(client: StationClient, runId: string, body: SignalBody): Promise<SignalAnswer> {
  return client.json("POST", `${runPath(runId)}/signal`, { body, schema: SignalAnswer });
}

/** GET /api/v1/workflow-runs/:id/signals */
export async function runSignals(client: StationClient, runId: string) {
  return (await client.json("GET", `${runPath(runId)}/signals`, { schema: SignalList })).signals;
}
