/**
 * Writes the flow-control commands to the ledger: the run_concurrency rows and each key's counts, and the
 * rate-limit starts and reservations (`rate_admissions`).
 */

import { acquireKeys, enqueueKeys, releaseKeys } from "../../db/concurrency_keys.ts";
import type { Statements } from "../../db/statements.ts";
import type { Command } from "./commands.ts";

type ConcurrencyCommand = Extract<
  Command,
  { kind: "enqueue_concurrency" | "acquire_concurrency" | "release_concurrency" | "record_rate" }
>;

/** Applies one concurrency command (the caller holds the transaction); `freed` gets keys runs still wait for. */
export function applyConcurrency(sql: Statements, c: ConcurrencyCommand, freed?: string[]): void {
  switch (c.kind) {
    case "enqueue_concurrency":
      enqueueKeys(sql, c);
      break;
    case "acquire_concurrency":
      acquireKeys(sql, c.runId);
      break;
    case "record_rate":
      recordRate(sql, c);
      break;
    case "release_concurrency":
      sql.run("DELETE FROM rate_admissions WHERE holder = ? AND status = 'reserved'", c.runId);
      releaseKeys(sql, c.runId, freed);
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
