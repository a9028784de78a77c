import type { Migration } from "../migrate.ts";

/**
 * Workflow rate limits and debounce (issue 33, docs/workflows.md#flow-control). A rate-limit key waits in
 * `run_concurrency` like a concurrency key, its row carrying the window (`period_ms`); `run_rate_windows` keeps
 * each admission of a rate-limited run until it leaves its key's window (`until_ms`), so the window holds for
 * every process on the ledger and across a restart (expired rows are deleted as the window moves on).
 * `debounced_starts` keeps, per debounce key, the last event's start that waits for its window to end: when
 * (`fire_ms`), with what definition and input, and which event asked.
 */
export default {
  version: 27,
  name: "rate_debounce",
  sql: `
    ALTER TABLE run_concurrency ADD COLUMN period_ms INTEGER;
    CREATE TABLE run_rate_windows (
      seq INTEGER PRIMARY KEY,
      key TEXT NOT NULL,
      run_id TEXT NOT NULL,
      until_ms INTEGER NOT NULL
    );
    CREATE INDEX run_rate_windows_window ON run_rate_windows (key, until_ms);
    CREATE INDEX run_rate_windows_until ON run_rate_windows (until_ms);
    CREATE TABLE debounced_starts (
      key TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      workflow_version INTEGER,
      definition TEXT NOT NULL,
      input TEXT NOT NULL,
      trig TEXT NOT NULL,
      event_id TEXT NOT NULL,
      fire_ms INTEGER NOT NULL
    );
    CREATE INDEX debounced_starts_due ON debounced_starts (fire_ms);
  `,
} satisfies Migration;
