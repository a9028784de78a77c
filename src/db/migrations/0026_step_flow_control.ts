import type { Migration } from "../migrate.ts";

/**
 * Flow control on steps (issue 33, docs/workflows.md#flow-control). A step attempt's concurrency keys use the
 * rows of migration 0025 (`run_concurrency` with `run_id` = `attempt:<id>`, the holder; `concurrency_keys`),
 * so runs and steps share one admission. `rate_admissions` keeps, per rate-limit key, the starts inside the
 * window (`started`, pruned once older than the period) and the instant promised to each step waiting for the
 * window (`reserved`, one per holder, first come first served), so the limit holds for every process on the
 * ledger and a wait survives a restart (its timer is a ledger row too).
 */
export default {
  version: 26,
  name: "step_flow_control",
  sql: `
    CREATE TABLE rate_admissions (
      seq INTEGER PRIMARY KEY,
      key TEXT NOT NULL,
      holder TEXT NOT NULL,
      at_ms INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('started', 'reserved'))
    );
    CREATE INDEX rate_admissions_key ON rate_admissions (key, at_ms);
    CREATE INDEX rate_admissions_holder ON rate_admissions (holder) WHERE status = 'reserved';
  `,
} satisfies Migration;
