import type { Migration } from "../migrate.ts";

/**
 * Concurrency keys (issue 33, docs/workflows.md#flow-control): one row per run and key it holds (`held`) or
 * waits for (`waiting`), written in the transaction that starts, admits or ends the run, so the limits hold
 * across every stn process and restart. `seq` orders the waiters (FIFO within a priority). `concurrency_keys`
 * counts each busy key's holders and waiters (kept by the same writes), so admitting a run reads one row per key
 * however many runs hold it; a key nobody holds or waits for has no row.
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
    CREATE TABLE concurrency_keys (
      key TEXT PRIMARY KEY,
      held INTEGER NOT NULL,
      waiting INTEGER NOT NULL
    );
  `,
} satisfies Migration;
