/**
 * The ledger reads of concurrency and rate-limit keys (`run_concurrency`, `concurrency_keys`,
 * `rate_admissions`; written by `apply_concurrency.ts`).
 */

import type { Statements } from "../../db/statements.ts";
import { iso } from "../../lib/clock.ts";
import { RATE_KEY } from "./flow_keys.ts";
import { AGING_MS, type KeyUsage, type Waiter } from "./concurrency.ts";

/** Why a run waits for concurrency: the key, its place in line there, and for a rate limit when it may go. */
export interface WaitingFor {
  key: string;
  position: number;
  reason: "concurrency" | "rate_limit";
  /** A rate limit: when the oldest admission in its window leaves it (ISO-8601). */
  until?: string;
}

/** How busy each concurrency key is and which runs wait for it. */
export class ConcurrencyReads {
  #sql: Statements;

  constructor(sql: Statements) {
    this.#sql = sql;
  }

  /** How many runs hold and wait for a key; a rate-limit key's holders are the runs admitted in its window at `now`. */
  readonly usage = (key: string, now: number): KeyUsage => {
    const row = this.#sql.get<KeyUsage>("SELECT held, waiting FROM concurrency_keys WHERE key = ?", key);
    const usage = { held: row?.held ?? 0, waiting: row?.waiting ?? 0 };
    if (!key.startsWith(RATE_KEY)) return usage;
    const inWindow = this.#sql.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM rate_admissions WHERE key = ? AND until_ms > ?",
      key,
      now,
    )!;
    return { ...usage, held: inWindow.n };
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
  /**
   * A waiting run's place in the queue of the first key it waits for (1 = next), that key, and why: a
   * concurrency key, or a rate limit (with `until`, when its window next lets one more run in).
   */
  readonly position = (runId: string): WaitingFor | undefined => {
    const row = this.#sql.get<
      { key: string; position: number; period_ms: number | null; until: number | null }
    >(
      `SELECT w.key, w.period_ms, (SELECT COUNT(*) FROM run_concurrency o WHERE o.key = w.key
         AND o.status = 'waiting' AND o.seq <= w.seq) AS position,
         (SELECT MIN(until_ms) FROM rate_admissions a WHERE a.key = w.key) AS until
       FROM run_concurrency w WHERE w.run_id = ? AND w.status = 'waiting' ORDER BY w.seq LIMIT 1`,
      runId,
    );
    if (!row) return undefined;
    const { key, position } = row;
    if (row.period_ms === null) return { key, position, reason: "concurrency" };
    return { key, position, reason: "rate_limit", ...(row.until === null ? {} : { until: iso(row.until) }) };
  };
  /** The runs holding or waiting for a key, oldest first. */
  readonly runsOn = (key: string): string[] =>
    this.#sql.all<{ run_id: string }>("SELECT run_id FROM run_concurrency WHERE key = ? ORDER BY seq", key)
      .map((r) => r.run_id);
  /** Whether some rate-limit admission has left its window by `now` (runs waiting for its key may go). */
  readonly expiring = (now: number): boolean =>
    this.#sql.get("SELECT 1 FROM rate_admissions WHERE until_ms <= ? LIMIT 1", now) !== undefined;
  /** The keys some run waits for. */
  readonly waitedFor = (): string[] =>
    this.#sql.all<{ key: string }>("SELECT key FROM concurrency_keys WHERE waiting > 0").map((r) => r.key);
}
