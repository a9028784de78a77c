/**
 * The ledger's concurrency keys (migration 0025: `run_concurrency`, `concurrency_keys`), shared by workflow runs
 * and agent runs: a run's keys recorded held or waiting, taken when it is admitted, given back when it ends,
 * and the reads admission decides on. Callers hold the transaction. Workflow keys are `<workflow id>…`, agent
 * keys `agent:<environment>/<agent>…`, so the two never meet on one key.
 */

import type { Statements } from "./statements.ts";
import { AGING_MS, type KeySlot, type KeyUsage, type Waiter } from "../lib/concurrency.ts";

/** One run's keys as it enters: all held (it starts now) or all waited for. */
export interface EnqueuedKeys {
  runId: string;
  slots: KeySlot[];
  priority: number;
  queuedMs: number;
  held: boolean;
}

/** Records a run's keys, held or waiting, and counts them on each key. */
export function enqueueKeys(sql: Statements, c: EnqueuedKeys): void {
  for (const slot of c.slots) {
    sql.run(
      "INSERT INTO run_concurrency (run_id, key, lim, priority, queued_ms, status) VALUES (?, ?, ?, ?, ?, ?)",
      c.runId,
      slot.key,
      slot.limit,
      c.priority,
      c.queuedMs,
      c.held ? "held" : "waiting",
    );
    sql.run(
      `INSERT INTO concurrency_keys (key, held, waiting) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET held = held + excluded.held, waiting = waiting + excluded.waiting`,
      slot.key,
      c.held ? 1 : 0,
      c.held ? 0 : 1,
    );
  }
}

/** A waiting run takes every key it waited for. */
export function acquireKeys(sql: Statements, runId: string): void {
  sql.run(
    `UPDATE concurrency_keys SET held = held + 1, waiting = waiting - 1
     WHERE key IN (SELECT key FROM run_concurrency WHERE run_id = ? AND status = 'waiting')`,
    runId,
  );
  sql.run("UPDATE run_concurrency SET status = 'held' WHERE run_id = ?", runId);
}

/** Gives back (or stops waiting for) every key of a run; `freed` gets the keys other runs still wait for. */
export function releaseKeys(sql: Statements, runId: string, freed?: string[]): void {
  for (
    const r of sql.all<{ key: string; status: string }>(
      "DELETE FROM run_concurrency WHERE run_id = ? RETURNING key, status",
      runId,
    )
  ) {
    const [held, waiting] = r.status === "held" ? [1, 0] : [0, 1];
    const left = sql.get<KeyUsage>(
      "UPDATE concurrency_keys SET held = held - ?, waiting = waiting - ? WHERE key = ? RETURNING held, waiting",
      held,
      waiting,
      r.key,
    );
    if (left && left.waiting > 0) freed?.push(r.key);
    else if (left && left.held <= 0) sql.run("DELETE FROM concurrency_keys WHERE key = ?", r.key);
  }
}

/** The prefix of every agent run's key (docs/agents.md#concurrency). */
export const AGENT_KEY_PREFIX = "agent:";

/** How busy each concurrency key is and which runs wait for it. */
export class ConcurrencyKeys {
  protected sql: Statements;

  constructor(sql: Statements) {
    this.sql = sql;
  }

  /** How many runs hold and wait for a key. */
  readonly usage = (key: string): KeyUsage => {
    const row = this.sql.get<KeyUsage>("SELECT held, waiting FROM concurrency_keys WHERE key = ?", key);
    return { held: row?.held ?? 0, waiting: row?.waiting ?? 0 };
  };
  /**
   * The first `n` runs waiting for a key, best ranked first (priority aged at `now`, then arrival), with every
   * key each of them waits for: the only runs that can take the key's `n` free slots.
   */
  readonly firstWaiting = (key: string, n: number, now: number): Waiter[] =>
    this.sql.all<Waiter>(
      `SELECT seq, run_id, key, lim, priority, queued_ms FROM run_concurrency WHERE status = 'waiting' AND run_id IN
         (SELECT run_id FROM run_concurrency WHERE key = ? AND status = 'waiting'
          ORDER BY priority + MAX(0, ? - queued_ms) / ? DESC, seq LIMIT ?)`,
      key,
      now,
      AGING_MS,
      n,
    );
  /** A waiting run's place in the queue of the first key it waits for (1 = next), and that key. */
  readonly position = (runId: string): { key: string; position: number } | undefined => {
    const row = this.sql.get<{ key: string; position: number }>(
      `SELECT w.key, (SELECT COUNT(*) FROM run_concurrency o WHERE o.key = w.key AND o.status = 'waiting'
         AND o.seq <= w.seq) AS position
       FROM run_concurrency w WHERE w.run_id = ? AND w.status = 'waiting' ORDER BY w.seq LIMIT 1`,
      runId,
    );
    return row && { ...row };
  };
  /** The runs holding or waiting for a key, oldest first. */
  readonly runsOn = (key: string): string[] =>
    this.sql.all<{ run_id: string }>("SELECT run_id FROM run_concurrency WHERE key = ? ORDER BY seq", key)
      .map((r) => r.run_id);
  /** The keys some run waits for: agent runs' keys (`agents`) or workflow runs'. */
  readonly waitedFor = (agents = false): string[] =>
    this.sql.all<{ key: string }>(
      "SELECT key FROM concurrency_keys WHERE waiting > 0 AND (substr(key, 1, ?) = ?) = ?",
      AGENT_KEY_PREFIX.length,
      AGENT_KEY_PREFIX,
      agents ? 1 : 0,
    ).map((r) => r.key);
}
