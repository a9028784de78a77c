import type { Migration } from "../migrate.ts";

/**
 * Runs you can repair (issue 32, docs/workflows.md#retry-fork-and-re-run): a forked run names the run it was
 * forked from and the step it resumed at, and each step it copied as completed names the parent's attempt
 * whose recorded output it reused (so inspect, the dashboard and the agent-run link can show where it came from).
 */
export default {
  version: 24,
  name: "run_lineage",
  sql: `
    ALTER TABLE workflow_runs ADD COLUMN parent_run_id TEXT;
    ALTER TABLE workflow_runs ADD COLUMN forked_from TEXT;
    ALTER TABLE step_attempts ADD COLUMN reused_from INTEGER;
    CREATE INDEX workflow_runs_by_parent ON workflow_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
  `,
} satisfies Migration;
