/** Where a run's event log is read from: the workflow engine's `run_events`, or the agent ledger's. */
export interface EventLog<E extends { seq: number; type: string }> {
  /** Stored events after `seq`, in order (a page). */
  after(seq: number): E[];
  /** The last stored seq. */
  lastSeq(): number;
  /** True when the run has ended (or is gone): its log will not grow. */
  ended(): boolean;
  /** Calls fn when events are appended in this process; returns the unsubscribe. */
  watch(fn: () => void): () => void;
}

/** Run event types after which a run's stream ends. */
export const TERMINAL_EVENTS = new Set(["run_completed", "run_failed", "run_canceled"]);

/** Where following a run's events starts (after `after`), what stops it, and whether live ones follow. */
export interface FollowFrom {
  after: number;
  signal: AbortSignal;
  live?: boolean;
}

/**
 * A run's events after `after`, then live ones as they are appended, ending after the terminal event that is
 * last in the log (a retry reopens a run; docs/design/ledger-and-engine.md#event-logs); with `live` false, only
 * what is stored now. Reads the ledger every time: nothing is kept in memory, so any number of clients can resume from any seq. Wakes on the
 * writer's notifications, and polls once a second for events written by another process.
 */
export async function* followEvents<E extends { seq: number; type: string }>(
  log: EventLog<E>,
  after: number,
  signal: AbortSignal,
  live = true,
): AsyncGenerator<E> {
  let wake: (() => void) | undefined;
  const unwatch = log.watch(() => wake?.());
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    let cursor = after;
    while (!signal.aborted) {
      const rows = log.after(cursor);
      for (const row of rows) {
        cursor = row.seq;
        yield row;
        // A retried run's log goes on after the terminal event it ended with before.
        if (TERMINAL_EVENTS.has(row.type) && log.lastSeq() <= row.seq) return;
      }
      if (rows.length > 0) continue;
      if (!live) return;
      if (log.ended() && log.lastSeq() <= cursor) return;
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
