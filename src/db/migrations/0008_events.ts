import type { Migration } from "../migrate.ts";

/**
 * Events and signals (issue 20). `waits` are the durable waits of `await` steps (like approvals: one
 * row per waiting attempt, ended by an event, its timeout or a cancel). `events` is the record of
 * events sent to everyone (`POST /api/v1/events`, webhooks), kept for `events.retention`; its id makes
 * sending idempotent. `run_signals` are the signals sent to one run, kept until a step of that run
 * waits for their name (`consumed_by`).
 */
export default {
  version: 8,
  name: "events",
  sql: `
    CREATE TABLE waits (
      attempt_id INTEGER PRIMARY KEY REFERENCES step_attempts (id),
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      path TEXT NOT NULL,
      event TEXT NOT NULL,
      match TEXT,
      status TEXT NOT NULL CHECK (status IN ('pending', 'received', 'timed_out', 'canceled')),
      event_id TEXT,
      timeout_at TEXT,
      created_ms INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      ended_at TEXT
    );
    CREATE INDEX waits_pending ON waits (event, status);
    CREATE INDEX waits_by_run ON waits (run_id, status);

    CREATE TABLE events (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      data TEXT NOT NULL,
      source TEXT NOT NULL,
      received_at TEXT NOT NULL,
      received_ms INTEGER NOT NULL,
      resumed TEXT NOT NULL,
      started TEXT NOT NULL
    );
    CREATE INDEX events_by_time ON events (received_ms);
    CREATE INDEX events_by_name ON events (name, received_ms);

    CREATE TABLE run_signals (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
      signal_id TEXT NOT NULL,
      name TEXT NOT NULL,
      data TEXT NOT NULL,
      received_at TEXT NOT NULL,
      consumed_by INTEGER,
      UNIQUE (run_id, signal_id)
    );
    CREATE INDEX run_signals_pending ON run_signals (run_id, name, consumed_by);
  `,
} satisfies Migration;
