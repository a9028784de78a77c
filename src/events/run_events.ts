/** A workflow run's event log as the API shows it, read from the ledger. */

import { type Engine, type EventRow, TERMINAL_RUN } from "../workflows/engine/mod.ts";
import { followEvents, type FollowFrom } from "./follow.ts";

export { TERMINAL_EVENTS } from "./follow.ts";

/** One event as the API shows it. */
export interface RunEvent {
  seq: number;
  type: string;
  step: string | null;
  data: unknown;
  time: string;
}

/** The API shape of a stored event. */
export function toRunEvent(e: EventRow): RunEvent {
  return {
    seq: e.seq,
    type: e.type,
    step: e.step,
    data: e.data === null ? null : JSON.parse(e.data),
    time: e.time,
  };
}

/** A workflow run's events after `after`, then live ones, ending after its terminal event (see followEvents). */
export async function* followRunEvents(
  engine: Engine,
  runId: string,
  { after, signal, live = true }: FollowFrom,
): AsyncGenerator<RunEvent> {
  const log = {
    after: (seq: number) => engine.reads.events.after(runId, seq),
    lastSeq: () => engine.reads.events.lastSeq(runId),
    ended: () => {
      const run = engine.reads.runs.get(runId);
      return !run || TERMINAL_RUN.includes(run.status);
    },
    watch: (fn: () => void) => engine.watch(runId, fn),
  };
  for await (const row of followEvents(log, after, signal, live)) yield toRunEvent(row);
}
