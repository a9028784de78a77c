import type { Migration } from "../migrate.ts";

/**
 * Scheduled agents (a `.prompt` file's `schedule:`): one row per enabled schedule, kept in step with the
 * agents table by the agent scheduler. `next_run_at` survives a restart, so a fire missed while the
 * station was down happens once at the next start (as workflow schedules do); the compare-and-set on it
 * makes each fire happen once across stn processes. Runs record what started them in `trigger`.
 */
export default {
  version: 14,
  name: "agent_schedules",
  sql: `
    CREATE TABLE agent_schedules (
      environment TEXT NOT NULL,
      agent TEXT NOT NULL,
      checksum TEXT NOT NULL,
      cron TEXT NOT NULL,
      timezone TEXT NOT NULL,
      task TEXT NOT NULL,
      variables TEXT NOT NULL,
      next_run_at INTEGER NOT NULL,
      last_run_at INTEGER,
      last_run_id TEXT,
      PRIMARY KEY (environment, agent)
    );
    ALTER TABLE agent_runs ADD COLUMN trigger TEXT NOT NULL DEFAULT 'manual'
      CHECK (trigger IN ('manual', 'schedule', 'workflow', 'agent'));
  `,
} satisfies Migration;
