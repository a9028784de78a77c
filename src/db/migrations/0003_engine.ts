import type { Migration } from "../migrate.ts";

/**
 * The workflow engine's ledger (docs/design/ledger-and-engine.md). Runs own a definition snapshot so a run
 * keeps the definition it started with; scopes hold the data context of the top level ('') and of every
 * branch / iteration / try block; attempts are the unit the queue dispatches and fencing guards.
 */
export default {
  version: 3,
  name: "engine",
  sql: `
    CREATE TABLE workflow_runs (
      id TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      workflow_version INTEGER,
      definition TEXT NOT NULL,
      status TEXT NOT NULL,
      input TEXT NOT NULL,
      result TEXT,
      error TEXT,
      traceparent TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      started_at TEXT,
      completed_at TEXT
    );
    CREATE INDEX workflow_runs_by_workflow ON workflow_runs (workflow_id, id);
    CREATE INDEX workflow_runs_by_status ON workflow_runs (status, id);

    CREATE TABLE run_scopes (
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      scope TEXT NOT NULL,
      parent_attempt INTEGER,
      key TEXT NOT NULL DEFAULT '',
      position INTEGER NOT NULL DEFAULT 0,
      status TEXT NOT NULL,
      context TEXT NOT NULL,
      output TEXT,
      error TEXT,
      PRIMARY KEY (run_id, scope)
    );
    CREATE INDEX run_scopes_by_parent ON run_scopes (parent_attempt);

    CREATE TABLE step_attempts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      scope TEXT NOT NULL,
      path TEXT NOT NULL,
      step_id TEXT NOT NULL,
      step_type TEXT NOT NULL,
      visit INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      status TEXT NOT NULL,
      output TEXT,
      error TEXT,
      owner TEXT,
      lease_until INTEGER,
      dispatched_at INTEGER,
      created_at TEXT NOT NULL,
      started_at TEXT,
      completed_at TEXT,
      UNIQUE (run_id, path, visit, attempt)
    );
    CREATE INDEX step_attempts_active ON step_attempts (status, run_id);

    CREATE TABLE approvals (
      id TEXT PRIMARY KEY,
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      attempt_id INTEGER NOT NULL REFERENCES step_attempts (id),
      step_id TEXT NOT NULL,
      message TEXT NOT NULL,
      approvers TEXT NOT NULL,
      status TEXT NOT NULL,
      decided_by TEXT,
      comment TEXT,
      decided_at TEXT,
      timeout_at TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX approvals_by_run ON approvals (run_id);
    CREATE INDEX approvals_by_status ON approvals (status);
    CREATE INDEX approvals_by_attempt ON approvals (attempt_id);

    CREATE TABLE timers (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      attempt_id INTEGER NOT NULL REFERENCES step_attempts (id),
      kind TEXT NOT NULL,
      fire_at INTEGER NOT NULL,
      status TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX timers_pending ON timers (status, fire_at);
    CREATE INDEX timers_by_attempt ON timers (attempt_id);

    CREATE TABLE schedules (
      workflow_id TEXT PRIMARY KEY,
      version INTEGER NOT NULL,
      cron TEXT NOT NULL,
      timezone TEXT NOT NULL,
      input TEXT NOT NULL,
      next_run_at INTEGER NOT NULL,
      last_run_at INTEGER,
      last_run_id TEXT
    );

    CREATE TABLE run_events (
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      step TEXT,
      data TEXT,
      time TEXT NOT NULL,
      PRIMARY KEY (run_id, seq)
    );
  `,
} satisfies Migration;
