import type { EventBody, EventList, SendEventAnswer, SignalAnswer, SignalBody } from "../contract/events.ts";
import * as eventsAnswers from "./answers/events.ts";
import type { StationClient } from "./http.ts";

/** Calls of /api/v1/events and a run's signals. */

const runPath = (runId: string) => `/api/v1/workflow-runs/${encodeURIComponent(runId)}`;

/** POST /api/v1/events */
export function sendEvent(client: StationClient, body: EventBody): Promise<SendEventAnswer> {
  return client.json("POST", "/api/v1/events", { body, answer: eventsAnswers.SendEventAnswer });
}

/** GET /api/v1/events */
export function listEvents(
  client: StationClient,
  query: { name?: string; limit?: number; cursor?: string } = {},
): Promise<EventList> {
  return client.json("GET", "/api/v1/events", { query, answer: eventsAnswers.EventList });
}

/** POST /api/v1/workflow-runs/:id/signal */
export function signalRun(client: StationClient, runId: string, body: SignalBody): Promise<SignalAnswer> {
  return client.json("POST", `${runPath(runId)}/signal`, { body, answer: eventsAnswers.SignalAnswer });
}

/** GET /api/v1/workflow-runs/:id/signals */
export async function runSignals(client: StationClient, runId: string) {
  return (await client.json("GET", `${runPath(runId)}/signals`, { answer: eventsAnswers.SignalList }))
    .signals;
}
