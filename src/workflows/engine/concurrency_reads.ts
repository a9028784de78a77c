/** The ledger reads of concurrency keys (`run_concurrency`, `concurrency_keys`; written by `apply.ts`). */

import type { Statements } from "../../db/statements.ts";
import { AGING_MS, type KeyUsage, type Waiter } from "./concurrency.ts";

/** How busy each concurrency key is and which runs wait for it. */
export class ConcurrencyReads {
  #sql: Statements;

  constructor(sql: Statements) {
    this.#sql = sql;
  }

  /** How many runs hold and wait for a key. */
  readonly usage = (key: string): KeyUsage => {
    const row = this.#sql.get<KeyUsage>("SELECT held, waiting FROM concurrency_keys WHERE key = ?", key);
    return { held: row?.held ?? 0, waiting: row?.waiting ?? 0 };
  };
  /**
   * The first `n` runs waiting for a key, best ranked first (priority aged at `now`, then arrival), with every
   * key each of them waits for: the only runs that can take the key's `n` free slots.
   */
  readonly firstWaiting = (key: string, n: number, now: number): Waiter[] =>
    this.#sql.all<Waiter>(
      `SELECT seq, run_id, key, lim, priority, queued_ms FROM run_concurrency WHERE status = 'waiting' AND run_id IN
         (SELECT run_id FROM run_concurrency WHERE key = ? AND status = 'waiting'
          ORDER BY priority + MAX(0, ? - queued_ms) / ? DESC, seq LIMIT ?)`,
      key,
      now,
      AGING_MS,
      n,
    );
  /** Runs waiting for concurrency keys, per workflow. */
  readonly waitingRuns = (): { workflow_id: string; n: number }[] =>
    this.#sql.all<{ workflow_id: string; n: number }>(
      `SELECT workflow_id, COUNT(*) AS n FROM workflow_runs WHERE status = 'waiting_for_concurrency'
       GROUP BY workflow_id`,
    ).map((r) => ({ ...r }));
  /** A waiting run's place in the queue of the first key it waits for (1 = next), and that key. */
  readonly position = (runId: string): { key: string; position: number } | undefined => {
    const row = this.#sql.get<{ key: string; position: number }>(
      `SELECT w.key, (SELECT COUNT(*) FROM run_concurrency o WHERE o.key = w.key AND o.status = 'waiting'
         AND o.seq <= w.seq) AS position
       FROM run_concurrency w WHERE w.run_id = ? AND w.status = 'waiting' ORDER BY w.seq LIMIT 1`,
      runId,
    );
    return row && { ...row };
  };
  /** The runs holding or waiting for a key, oldest first. */
  readonly runsOn = (key: string): string[] =>
    this.#sql.all<{ run_id: string }>("SELECT run_id FROM run_concurrency WHERE key = ? ORDER BY seq", key)
      .map((r) => r.run_id);
  /** The keys some run waits for. */
  readonly waitedFor = (): string[] =>
    this.#sql.all<{ key: string }>("SELECT key FROM concurrency_keys WHERE waiting > 0").map((r) => r.key);
}
