/**
 * Writes the flow-control commands to the ledger: the run_concurrency rows and each key's counts, and the
 * rate-limit starts and reservations (`rate_admissions`).
 */

import type { Statements } from "../../db/statements.ts";
import type { Command } from "./commands.ts";
import type { KeyUsage } from "./concurrency.ts";

type ConcurrencyCommand = Extract<
  Command,
  { kind: "enqueue_concurrency" | "acquire_concurrency" | "release_concurrency" | "record_rate" }
>;

/** Applies one concurrency command (the caller holds the transaction); `freed` gets keys runs still wait for. */
export function applyConcurrency(sql: Statements, c: ConcurrencyCommand, freed?: string[]): void {
  switch (c.kind) {
    case "enqueue_concurrency":
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
      break;
    case "acquire_concurrency":
      sql.run(
        `UPDATE concurrency_keys SET held = held + 1, waiting = waiting - 1
         WHERE key IN (SELECT key FROM run_concurrency WHERE run_id = ? AND status = 'waiting')`,
        c.runId,
      );
      sql.run("UPDATE run_concurrency SET status = 'held' WHERE run_id = ?", c.runId);
      break;
    case "record_rate":
      recordRate(sql, c);
      break;
    case "release_concurrency":
      sql.run("DELETE FROM rate_admissions WHERE holder = ? AND status = 'reserved'", c.runId);
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
  }
}

/** Records a start (dropping the holder's reservation and the starts the window no longer counts) or a reservation. */
function recordRate(sql: Statements, c: Extract<Command, { kind: "record_rate" }>): void {
  const reserved = sql.get<{ seq: number }>(
    "SELECT seq FROM rate_admissions WHERE holder = ? AND key = ? AND status = 'reserved'",
    c.holder,
    c.key,
  );
  if (c.status === "reserved" && reserved) {
    sql.run("UPDATE rate_admissions SET at_ms = ? WHERE seq = ?", c.atMs, reserved.seq);
    return;
  }
  if (reserved) sql.run("DELETE FROM rate_admissions WHERE seq = ?", reserved.seq);
  sql.run(
    "INSERT INTO rate_admissions (key, holder, at_ms, status) VALUES (?, ?, ?, ?)",
    c.key,
    c.holder,
    c.atMs,
    c.status,
  );
  if (c.status === "started") {
    sql.run(
      "DELETE FROM rate_admissions WHERE key = ? AND status = 'started' AND at_ms <= ?",
      c.key,
      c.atMs - c.periodMs,
    );
  }
}
