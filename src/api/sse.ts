/** GET …/{run_id}/events for workflow and agent runs: the resumable Server-Sent Events route. */

import type { Context } from "hono";
import { StationError } from "../errors.ts";
import { streamRunEvents } from "../events/sse.ts";

/** The query of a run's events route (RunEventsQuery). */
interface EventsQuery {
  after?: string;
  follow?: "true" | "false";
}

/** Where a run's event log is resumed and followed from. */
interface FollowedLog<E> {
  /** The last stored seq: where `after=now` starts. */
  lastSeq(): number;
  /** The events after `after` (then live ones unless `live` is false), until the signal aborts. */
  follow(after: number, signal: AbortSignal, live: boolean): AsyncIterable<E>;
}

/**
 * GET …/{run_id}/events of workflow and agent runs alike: resumes after Last-Event-ID, else `?after=`
 * (a seq or "now"), else 0, and answers the events as SSE; a bad cursor is a 400 `invalid_cursor`
 * before the stream opens. An event goes out once its commit is on disk (`ledger.durability`).
 */
export function runEventsResponse<E extends { seq: number; type: string }>(
  c: Context,
  query: EventsQuery,
  station: { shutdown: AbortSignal; durable: () => Promise<void> },
  log: FollowedLog<E>,
): Response {
  const from = c.req.header("last-event-id") ?? query.after ?? "0";
  if (from !== "now" && !/^\d+$/.test(from)) {
    throw new StationError(
      "invalid_cursor",
      `after / Last-Event-ID must be a seq number or "now", got ${from}`,
      {
        status: 400,
      },
    );
  }
  const after = from === "now" ? log.lastSeq() : Number(from);
  const live = query.follow !== "false";
  return streamRunEvents(
    c,
    station.shutdown,
    (signal) => durably(log.follow(after, signal, live), station.durable),
  );
}

async function* durably<E>(events: AsyncIterable<E>, durable: () => Promise<void>): AsyncIterable<E> {
  for await (const e of events) {
    await durable();
    yield e;
  }
}
