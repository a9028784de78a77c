/**
 * Writes the concurrency-key commands to the ledger: the run_concurrency rows, each key's counts, and the
 * admissions in rate-limit windows (`rate_admissions`).
 */

import type { Statements } from "../../db/statements.ts";
import type { Command } from "./commands.ts";
import type { KeyUsage } from "./concurrency.ts";

type ConcurrencyCommand = Extract<
  Command,
  { kind: "enqueue_concurrency" | "acquire_concurrency" | "release_concurrency" | "expire_rate_admissions" }
>;

/** Applies one concurrency command (the caller holds the transaction); `freed` gets keys runs still wait for. */
export function applyConcurrency(sql: Statements, c: ConcurrencyCommand, freed?: string[]): void {
  switch (c.kind) {
    case "enqueue_concurrency":
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
      break;
    case "acquire_concurrency":
      // A rate-limit key is not held while the run runs: its admission counts in the window instead.
      for (
        const r of sql.all<{ key: string; period_ms: number }>(
          "DELETE FROM run_concurrency WHERE run_id = ? AND period_ms IS NOT NULL RETURNING key, period_ms",
          c.runId,
        )
      ) {
        admitInWindow(sql, { key: r.key, runId: c.runId, untilMs: c.atMs + r.period_ms });
        sql.run("UPDATE concurrency_keys SET waiting = waiting - 1 WHERE key = ?", r.key);
        sql.run("DELETE FROM concurrency_keys WHERE key = ? AND held <= 0 AND waiting <= 0", r.key);
      }
      sql.run(
        `UPDATE concurrency_keys SET held = held + 1, waiting = waiting - 1
         WHERE key IN (SELECT key FROM run_concurrency WHERE run_id = ? AND status = 'waiting')`,
        c.runId,
      );
      sql.run("UPDATE run_concurrency SET status = 'held' WHERE run_id = ?", c.runId);
      break;
    case "release_concurrency":
      for (
        const r of sql.all<{ key: string; status: string }>(
          "DELETE FROM run_concurrency WHERE run_id = ? RETURNING key, status",
          c.runId,
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
      break;
    case "expire_rate_admissions":
      // Each admission leaving its window is one more run its key may admit now.
      for (
        const r of sql.all<{ key: string }>(
          `DELETE FROM rate_admissions WHERE until_ms <= ? RETURNING key`,
          c.beforeMs,
        )
      ) {
        if (sql.get("SELECT 1 FROM concurrency_keys WHERE key = ? AND waiting > 0", r.key)) {
          freed?.push(r.key);
        }
      }
      break;
  }
}

/** Counts a run's admission in a rate-limit key's window until `untilMs`. */
function admitInWindow(sql: Statements, a: { key: string; runId: string; untilMs: number }): void {
  sql.run("INSERT INTO rate_admissions (key, run_id, until_ms) VALUES (?, ?, ?)", a.key, a.runId, a.untilMs);
}
