import type { Migration } from "../migrate.ts";

/**
 * Concurrency keys (issue 33, docs/workflows.md#flow-control): one row per run and key it holds (`held`) or
 * waits for (`waiting`), written in the transaction that starts, admits or ends the run, so the limits hold
 * across every stn process and restart. `seq` orders the waiters (FIFO within a priority).
 */
export default {
  version: 25,
  name: "run_concurrency",
  sql: `
    CREATE TABLE run_concurrency (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL,
      key TEXT NOT NULL,
      lim INTEGER NOT NULL,
      priority INTEGER NOT NULL,
      queued_ms INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('held', 'waiting')),
      UNIQUE (run_id, key)
    );
    CREATE INDEX run_concurrency_by_key ON run_concurrency (key, status, seq);
  `,
} satisfies Migration;
