import type { Engine } from "../workflows/engine/engine.ts";
import { type EventRow, TERMINAL_RUN } from "../workflows/engine/ledger.ts";

/** Run event types after which a run's stream ends. */
export const TERMINAL_EVENTS = new Set(["run_completed", "run_failed", "run_canceled"]);

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

/**
 * The run's events after `after`, then live ones as they are appended, ending after the terminal
 * event (DESIGN §5); with `live` false, only what is stored now. Reads the ledger every time: nothing is kept in memory, so any number of
 * clients can resume from any seq. Wakes on the engine's notifications, and polls once a second
 * for events written by another process.
 */
export async function* followRunEvents(
  engine: Engine,
  runId: string,
  after: number,
  signal: AbortSignal,
  live = true,
): AsyncGenerator<RunEvent> {
  let wake: (() => void) | undefined;
  const unwatch = engine.watch(runId, () => wake?.());
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    let cursor = after;
    while (!signal.aborted) {
      const rows = engine.reads.events.after(runId, cursor);
      for (const row of rows) {
        cursor = row.seq;
        yield toRunEvent(row);
        if (TERMINAL_EVENTS.has(row.type)) return;
      }
      if (rows.length > 0) continue;
      if (!live) return;
      const run = engine.reads.runs.get(runId);
      if (!run || (TERMINAL_RUN.includes(run.status) && engine.reads.events.lastSeq(runId) <= cursor)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unwatch();
    signal.removeEventListener("abort", onAbort);
  }
}
