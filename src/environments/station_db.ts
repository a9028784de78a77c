/**
 * Reading Station's (the Go project's) station.db for `stn import station`: from a copy made in a temp folder,
 * so not a byte of Station's file, -wal or -shm changes, and a running Station is not disturbed.
 */

import { DatabaseSync } from "node:sqlite";
import { basename, join } from "node:path";
import { errorMessage, usageError } from "../errors.ts";

/** An agent as Station's database holds it. */
export interface StationAgent {
  environment: string;
  name: string;
  description: string | null;
  prompt: string;
  max_steps: number | null;
  input_schema: string | null;
  output_schema: string | null;
  cron_schedule: string | null;
  /** The MCP tools assigned to it (Station's names). */
  tools: string[];
}

/** A workflow's latest version in Station's database. */
export interface StationWorkflow {
  workflow_id: string;
  name: string;
  description: string | null;
  version: number;
  definition: string;
}

/** Runs Station recorded, by status, with the latest start. */
export interface RunSummary {
  total: number;
  by_status: Record<string, number>;
  latest: string | null;
}

/** What `stn import station` reads from Station's database. */
export interface StationData {
  /** Goose's highest applied migration (44 migrations make it 48). */
  schema_version: number;
  environments: string[];
  agents: StationAgent[];
  workflows: StationWorkflow[];
  agent_runs: RunSummary;
  workflow_runs: RunSummary;
  /** Rows of the tables stn has no equivalent for, by table (only non-empty ones). */
  other_rows: Record<string, number>;
}

// Station tables whose rows do not map into stn; reported by count.
const OTHER_TABLES = [
  "users",
  "settings",
  "workflow_schedules",
  "workflow_approvals",
  "reports",
  "benchmark_tasks",
  "faker_sessions",
  "notification_logs",
];

function tableExists(db: DatabaseSync, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function runSummary(db: DatabaseSync, table: string, started: string): RunSummary {
  if (!tableExists(db, table)) return { total: 0, by_status: {}, latest: null };
  const rows = db.prepare(
    `SELECT status, COUNT(*) AS n, MAX(${started}) AS latest FROM ${table} GROUP BY status`,
  )
    .all() as { status: string; n: number; latest: string | null }[];
  const latest = rows.map((r) => r.latest).filter((l): l is string => l !== null).sort().pop() ?? null;
  return {
    total: rows.reduce((s, r) => s + r.n, 0),
    by_status: Object.fromEntries(rows.map((r) => [r.status, r.n])),
    latest,
  };
}

function agents(db: DatabaseSync): StationAgent[] {
  const rows = db.prepare(
    `SELECT a.id, e.name AS environment, a.name, a.description, a.prompt, a.max_steps, a.input_schema,
       a.output_schema, a.cron_schedule
     FROM agents a JOIN environments e ON e.id = a.environment_id ORDER BY e.name, a.name`,
  ).all() as unknown as (Omit<StationAgent, "tools"> & { id: number })[];
  const tools = db.prepare(
    "SELECT t.name FROM agent_tools at JOIN mcp_tools t ON t.id = at.tool_id WHERE at.agent_id = ? ORDER BY t.name",
  );
  return rows.map(({ id, ...a }) => ({
    ...a,
    tools: (tools.all(id) as { name: string }[]).map((t) => t.name),
  }));
}

function workflows(db: DatabaseSync): StationWorkflow[] {
  if (!tableExists(db, "workflows")) return [];
  return db.prepare(
    `SELECT workflow_id, name, description, version, definition FROM workflows w
     WHERE version = (SELECT MAX(version) FROM workflows v WHERE v.workflow_id = w.workflow_id)
     ORDER BY workflow_id`,
  ).all() as unknown as StationWorkflow[];
}

function read(db: DatabaseSync): StationData {
  if (!tableExists(db, "agents") || !tableExists(db, "environments")) {
    throw usageError("invalid_usage", "not Station's database: it has no agents or environments table");
  }
  const version = tableExists(db, "goose_db_version")
    ? (db.prepare("SELECT MAX(version_id) AS v FROM goose_db_version WHERE is_applied = 1").get() as {
      v: number;
    }).v
    : 0;
  const other: Record<string, number> = {};
  for (const t of OTHER_TABLES) {
    if (!tableExists(db, t)) continue;
    const n = (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
    if (n > 0) other[t] = n;
  }
  return {
    schema_version: version ?? 0,
    environments: (db.prepare("SELECT name FROM environments ORDER BY name").all() as { name: string }[])
      .map((r) => r.name),
    agents: agents(db),
    workflows: workflows(db),
    agent_runs: runSummary(db, "agent_runs", "started_at"),
    workflow_runs: runSummary(db, "workflow_runs", "started_at"),
    other_rows: other,
  };
}

/** Reads Station's database at `path` through a temp copy of it and its -wal; the original is only read. */
export function readStationDb(path: string): StationData {
  const dir = Deno.makeTempDirSync({ prefix: "stn-import-" });
  try {
    const copy = join(dir, basename(path));
    try {
      Deno.copyFileSync(path, copy);
    } catch (err) {
      throw usageError("invalid_usage", `${path}: cannot be read: ${errorMessage(err)}`, "check --home");
    }
    try {
      Deno.copyFileSync(`${path}-wal`, `${copy}-wal`);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(copy, { readOnly: true });
    } catch (err) {
      throw usageError("invalid_usage", `${path}: not an SQLite database: ${errorMessage(err)}`);
    }
    try {
      return read(db);
    } catch (err) {
      if (err instanceof Error && /not a database|malformed/.test(err.message)) {
        throw usageError("invalid_usage", `${path}: not an SQLite database: ${errorMessage(err)}`);
      }
      throw err;
    } finally {
      db.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
