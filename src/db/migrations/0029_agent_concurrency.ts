import type { DatabaseSync } from "node:sqlite";
import type { Migration } from "../migrate.ts";

/**
 * Agent runs wait for concurrency keys (issue 33, docs/agents.md#concurrency): `agent_runs.status` may be
 * `waiting_for_concurrency`. SQLite cannot change a CHECK in place, so the table is rebuilt (foreign keys off,
 * so dropping the old one does not cascade to its turns, tool calls and events), from its CREATE statement
 * as the ledger holds it: every column a migration added is kept. Its keys live in `run_concurrency` with the
 * workflow runs' (migration 0025), under `agent:<environment>/<agent>…`.
 */

const OLD = "CHECK (status IN ('running', 'completed', 'failed', 'canceled'))";
const NEW = "CHECK (status IN ('running', 'waiting_for_concurrency', 'completed', 'failed', 'canceled'))";

function rebuild(db: DatabaseSync): string {
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'agent_runs'")
    .get() as { sql: string };
  if (!table.sql.includes(OLD)) throw new Error(`agent_runs has no ${OLD} to widen`);
  const indexes = db.prepare(
    "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'agent_runs' AND sql IS NOT NULL",
  ).all() as { sql: string }[];
  return [
    table.sql.replace(/^CREATE TABLE "?agent_runs"?/, "CREATE TABLE agent_runs_new").replace(OLD, NEW),
    "INSERT INTO agent_runs_new SELECT * FROM agent_runs",
    "DROP TABLE agent_runs",
    "ALTER TABLE agent_runs_new RENAME TO agent_runs",
    ...indexes.map((i) => i.sql),
    "",
  ].join(";\n");
}

export default {
  version: 29,
  name: "agent_concurrency",
  sql: rebuild,
  foreignKeysOff: true,
} satisfies Migration;
