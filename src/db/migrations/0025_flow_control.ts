import type { Migration } from "../migrate.ts";

/**
 * Flow control (issue 33, docs/workflows.md#flow-control). `run_concurrency`: one row per run and concurrency
 * key it holds (`held`) or waits for (`waiting`), written in the transaction that starts, admits or ends the
 * run, so the limits hold across every stn process and restart; `seq` (a new row's is above every row's there)
 * orders the waiters (FIFO within a priority). `concurrency_keys` counts each busy key's holders and waiters
 * (kept by the same writes), so admitting a run reads one row per key however many runs hold it; a key nobody
 * holds or waits for has no row. `model_limits` keeps each limited model's next free request slot, when its
 * last call went, when its spent tokens are paid off, and a provider's Retry-After (ai.limits), so a model
 * call's wait survives a restart and holds for every process on the ledger.
 */
export default {
  version: 25,
  name: "flow_control",
  sql: `
    CREATE TABLE run_concurrency (
      seq INTEGER PRIMARY KEY,
      run_id TEXT NOT NULL,
      key TEXT NOT NULL,
      lim INTEGER NOT NULL,
      priority INTEGER NOT NULL,
      queued_ms INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('held', 'waiting')),
      UNIQUE (run_id, key)
    );
    CREATE INDEX run_concurrency_waiting ON run_concurrency (key, seq) WHERE status = 'waiting';
    CREATE TABLE model_limits (
      key TEXT PRIMARY KEY,
      next_ms INTEGER NOT NULL DEFAULT 0,
      sent_ms INTEGER NOT NULL DEFAULT 0,
      tokens_ms INTEGER NOT NULL DEFAULT 0,
      blocked_until_ms INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE concurrency_keys (
      key TEXT PRIMARY KEY,
      held INTEGER NOT NULL,
      waiting INTEGER NOT NULL
    );
  `,
} satisfies Migration;
