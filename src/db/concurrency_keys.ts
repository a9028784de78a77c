/**
 * The ledger's concurrency keys (migration 0025: `run_concurrency`, `concurrency_keys`), shared by workflow runs
 * and agent runs: a run's keys recorded held or waiting, taken when it is admitted, given back when it ends,
 * and the reads admission decides on. Callers hold the transaction. Workflow keys are `<workflow id>…`, agent
 * keys `agent:<environment>/<agent>…`, so the two never meet on one key. A workflow's rate-limit keys
 * (`rate:…`, migration 0027) wait in `run_concurrency` like the others, but a run admitted there holds nothing:
 * its admission counts in `run_rate_windows` until it leaves the key's window.
 */

import type { Statements } from "./statements.ts";
import { AGING_MS, type KeySlot, type KeyUsage, type Waiter } from "../lib/concurrency.ts";
import { iso } from "../lib/clock.ts";

/** The prefix of a workflow's rate-limit key (workflow ids have no `:`, so it never names a concurrency key). */
export const RATE_KEY_PREFIX = "rate:";

/** Why a run waits: the key, its place in line there, and for a rate limit when its window lets one more in. */
export interface WaitingFor {
  key: string;
  position: number;
  reason: "concurrency" | "rate_limit";
  /** A rate limit: when the oldest admission in its window leaves it (ISO-8601). */
  until?: string;
}

/** One run's keys as it enters: all held (it starts now) or all waited for. */
export interface EnqueuedKeys {
  runId: string;
  slots: KeySlot[];
  priority: number;
  queuedMs: number;
  held: boolean;
}

/** Records a run's keys, held or waiting, and counts them on each key (a held rate key: an admission in its window). */
export function enqueueKeys(sql: Statements, c: EnqueuedKeys): void {
  for (const slot of c.slots) {
    if (c.held && slot.periodMs !== undefined) {
      admitInWindow(sql, { key: slot.key, runId: c.runId, untilMs: c.queuedMs + slot.periodMs });
      continue;
    }
    sql.run(
      `INSERT INTO run_concurrency (run_id, key, lim, priority, queued_ms, status, period_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      c.runId,
      slot.key,
      slot.limit,
      c.priority,
      c.queuedMs,
      c.held ? "held" : "waiting",
      slot.periodMs ?? null,
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

/** A waiting run takes every key it waited for at `atMs` (a rate key: it is admitted in the key's window). */
export function acquireKeys(sql: Statements, runId: string, atMs: number): void {
  // A rate-limit key is not held while the run runs: its admission counts in the window instead.
  for (
    const r of sql.all<{ key: string; period_ms: number }>(
      "DELETE FROM run_concurrency WHERE run_id = ? AND period_ms IS NOT NULL RETURNING key, period_ms",
      runId,
    )
  ) {
    admitInWindow(sql, { key: r.key, runId, untilMs: atMs + r.period_ms });
    sql.run("UPDATE concurrency_keys SET waiting = waiting - 1 WHERE key = ?", r.key);
    sql.run("DELETE FROM concurrency_keys WHERE key = ? AND held <= 0 AND waiting <= 0", r.key);
  }
  sql.run(
    `UPDATE concurrency_keys SET held = held + 1, waiting = waiting - 1
     WHERE key IN (SELECT key FROM run_concurrency WHERE run_id = ? AND status = 'waiting')`,
    runId,
  );
  sql.run("UPDATE run_concurrency SET status = 'held' WHERE run_id = ?", runId);
}

/** Forgets the rate-limit admissions that left their window by `beforeMs`; `freed` gets keys runs wait for. */
export function expireRateWindows(sql: Statements, beforeMs: number, freed?: string[]): void {
  // Each admission leaving its window is one more run its key may admit now.
  for (
    const r of sql.all<{ key: string }>(
      "DELETE FROM run_rate_windows WHERE until_ms <= ? RETURNING key",
      beforeMs,
    )
  ) {
    if (sql.get("SELECT 1 FROM concurrency_keys WHERE key = ? AND waiting > 0", r.key)) freed?.push(r.key);
  }
}

/** Counts a run's admission in a rate-limit key's window until `untilMs`. */
function admitInWindow(sql: Statements, a: { key: string; runId: string; untilMs: number }): void {
  sql.run("INSERT INTO run_rate_windows (key, run_id, until_ms) VALUES (?, ?, ?)", a.key, a.runId, a.untilMs);
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

  /** How many runs hold and wait for a key; a rate-limit key's holders are the runs admitted in its window at `now`. */
  readonly usage = (key: string, now: number): KeyUsage => {
    const row = this.sql.get<KeyUsage>("SELECT held, waiting FROM concurrency_keys WHERE key = ?", key);
    const usage = { held: row?.held ?? 0, waiting: row?.waiting ?? 0 };
    if (!key.startsWith(RATE_KEY_PREFIX)) return usage;
    const inWindow = this.sql.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM run_rate_windows WHERE key = ? AND until_ms > ?",
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
    this.sql.all<Waiter>(
      `SELECT seq, run_id, key, lim, priority, queued_ms FROM run_concurrency WHERE status = 'waiting' AND run_id IN
         (SELECT run_id FROM run_concurrency WHERE key = ? AND status = 'waiting'
          ORDER BY priority + MAX(0, ? - queued_ms) / ? DESC, seq LIMIT ?)`,
      key,
      now,
      AGING_MS,
      n,
    );
  /**
   * A waiting run's place in the queue of the first key it waits for (1 = next), that key, and why: a
   * concurrency key, or a rate limit (with `until`, when its window next lets one more run in).
   */
  readonly position = (runId: string): WaitingFor | undefined => {
    const row = this.sql.get<
      { key: string; position: number; period_ms: number | null; until: number | null }
    >(
      `SELECT w.key, w.period_ms, (SELECT COUNT(*) FROM run_concurrency o WHERE o.key = w.key
         AND o.status = 'waiting' AND o.seq <= w.seq) AS position,
         (SELECT MIN(until_ms) FROM run_rate_windows a WHERE a.key = w.key) AS until
       FROM run_concurrency w WHERE w.run_id = ? AND w.status = 'waiting' ORDER BY w.seq LIMIT 1`,
      runId,
    );
    if (!row) return undefined;
    const { key, position } = row;
    if (row.period_ms === null) return { key, position, reason: "concurrency" };
    return { key, position, reason: "rate_limit", ...(row.until === null ? {} : { until: iso(row.until) }) };
  };
  /** Whether some rate-limit admission has left its window by `now` (runs waiting for its key may go). */
  readonly expiring = (now: number): boolean =>
    this.sql.get("SELECT 1 FROM run_rate_windows WHERE until_ms <= ? LIMIT 1", now) !== undefined;
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
