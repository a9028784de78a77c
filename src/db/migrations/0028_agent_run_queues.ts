import type { Migration } from "../migrate.ts";

/**
 * Agent runs routed to a task queue (issue 33, docs/workers.md#agent-runs-on-a-queue): `queue` (null: the run
 * runs on the station), the `stn worker` holding its claim (`owner`, null while none has taken it), the claim's
 * lease (ms since epoch; renewed by the worker's heartbeats, lapsed when it dies) and `claims`, bumped by each
 * take, so a write names exactly the claim it was made under. `agent_run_writes` keeps the id a worker chose
 * for each write it sent, so a write re-sent after a lost answer is applied once.
 */
export default {
  version: 28,
  name: "agent_run_queues",
  sql: `
    ALTER TABLE agent_runs ADD COLUMN queue TEXT;
    ALTER TABLE agent_runs ADD COLUMN owner TEXT;
    ALTER TABLE agent_runs ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_runs ADD COLUMN claims INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX agent_runs_queued ON agent_runs (queue, id) WHERE queue IS NOT NULL AND status = 'running';
    CREATE TABLE agent_run_writes (
      run_id TEXT NOT NULL,
      write_id TEXT NOT NULL,
      PRIMARY KEY (run_id, write_id)
    ) WITHOUT ROWID;
  `,
} satisfies Migration;
