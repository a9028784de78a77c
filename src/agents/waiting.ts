/** Waiting for agent runs: this process's runs until admitted (their concurrency keys, admission.ts), any run until it ends. */

import type { AgentLedger } from "./ledger.ts";
import { type AgentRunRow, type AgentRunStatus, runEnded } from "./run_rows.ts";

/** Wakes each waiting run of this process when the ledger admits it or it ends while waiting. */
export class WaitingRuns {
  #wake = new Map<string, () => void>();

  /**
   * Resolves when the run is no longer `waiting_for_concurrency` (admitted or ended), or at `wakeAll`;
   * `signal` aborting calls `onAbort` (which cancels the run, and so wakes it).
   */
  until(
    runId: string,
    status: () => AgentRunStatus | undefined,
    stop: { signal?: AbortSignal; onAbort: () => void },
  ): Promise<void> {
    return new Promise((resolve) => {
      const { signal, onAbort } = stop;
      const done = () => {
        this.#wake.delete(runId);
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#wake.set(runId, done);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Admitted (or ended) between its creation and now: nobody was here to wake.
      if (status() !== "waiting_for_concurrency") done();
      else if (signal?.aborted) onAbort();
    });
  }

  /** Wakes the runs waiting here; returns the ones nobody here waits for. */
  wake(runIds: string[]): string[] {
    return runIds.filter((id) => {
      const wake = this.#wake.get(id);
      wake?.();
      return wake === undefined;
    });
  }

  /** Wakes every run waiting here (the process stops: they stay waiting in the ledger). */
  wakeAll(): void {
    for (const wake of [...this.#wake.values()]) wake();
  }
}

/** The end of a run wherever it runs (a worker, another process): its row once ended, or at `signal`'s abort. */
export async function untilEnded(
  ledger: AgentLedger,
  runId: string,
  signal?: AbortSignal,
): Promise<AgentRunRow> {
  for (;;) {
    const row = ledger.get(runId);
    if (!row || runEnded(row.status) || signal?.aborted) return row!;
    // Woken by its writes here (a worker's too: this station commits them), else in a second (another process's).
    await new Promise<void>((r) => {
      const off = ledger.watch(runId, () => (off(), clearTimeout(t), r()));
      const t = setTimeout(() => (off(), r()), 1000);
    });
  }
}
