/** The ledger reads of step flow control: what an attempt holds, a rate key's starts, a run's priority. */

import type { Statements } from "../../db/statements.ts";

/** Reads of `run_concurrency` and `rate_admissions` for step attempts (written by `apply_concurrency.ts`). */
export class StepLimitReads {
  #sql: Statements;

  constructor(sql: Statements) {
    this.#sql = sql;
  }

  /** Whether a holder already holds its concurrency keys (an attempt admitted after waiting). */
  readonly holds = (holder: string): boolean =>
    this.#sql.get("SELECT 1 FROM run_concurrency WHERE run_id = ? AND status = 'held' LIMIT 1", holder) !==
      undefined;

  /**
   * The instants that count against a new start of `holder` on a rate key: the starts kept (inside the window)
   * and the instants promised to the waiters that came before it (all of them when it has none yet).
   */
  readonly rateTimes = (key: string, holder: string): number[] =>
    this.#sql.all<{ at_ms: number }>(
      `SELECT at_ms FROM rate_admissions WHERE key = ? AND (status = 'started' OR seq <
         COALESCE((SELECT seq FROM rate_admissions WHERE key = ? AND holder = ? AND status = 'reserved'), 1e18))`,
      key,
      key,
      holder,
    ).map((r) => r.at_ms);

  /** The rate key a holder waits for and the instant promised to it, when it waits for a rate window. */
  readonly reservation = (holder: string): { key: string; at_ms: number } | undefined => {
    const row = this.#sql.get<{ key: string; at_ms: number }>(
      "SELECT key, at_ms FROM rate_admissions WHERE holder = ? AND status = 'reserved'",
      holder,
    );
    return row && { ...row };
  };

  /** The priority a run was admitted with (its own or its start's override), when it took concurrency keys. */
  readonly runPriority = (runId: string): number | undefined =>
    this.#sql.get<{ priority: number }>(
      "SELECT priority FROM run_concurrency WHERE run_id = ? LIMIT 1",
      runId,
    )
      ?.priority;
}
