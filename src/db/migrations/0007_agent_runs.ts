import type { Migration } from "../migrate.ts";

/**
 * Agent runs (docs/design/agents.md#durable-turns): one row per run, its model turns and tool calls as
 * they complete (the checkpoints a run resumes from after a crash), and its event log. A run started
 * by a workflow step is linked to that step attempt, a child agent's run to its parent's tool call;
 * both links are unique, so a redelivered attempt or a re-run tool call finds the run it started.
 */
export default {
  version: 7,
  name: "agent_runs",
  sql: `
    CREATE TABLE agent_runs (
      id TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      environment TEXT NOT NULL,
      model TEXT NOT NULL,
      task TEXT NOT NULL,
      variables TEXT NOT NULL,
      plan TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'canceled')),
      finish_reason TEXT CHECK (finish_reason IN
        ('stop', 'max_steps', 'output_invalid', 'timeout', 'canceled', 'error')),
      response TEXT,
      result TEXT,
      error TEXT,
      turns INTEGER NOT NULL DEFAULT 0,
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      cached_tokens INTEGER NOT NULL DEFAULT 0,
      total_tokens INTEGER NOT NULL DEFAULT 0,
      parent_run_id TEXT REFERENCES agent_runs (id) ON DELETE CASCADE,
      parent_call_id TEXT,
      workflow_run_id TEXT,
      step_path TEXT,
      step_visit INTEGER,
      step_attempt INTEGER,
      trace_id TEXT,
      created_at TEXT NOT NULL,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      duration_ms INTEGER
    );
    CREATE INDEX agent_runs_by_agent ON agent_runs (agent, id);
    CREATE INDEX agent_runs_by_status ON agent_runs (status, id);
    CREATE UNIQUE INDEX agent_runs_by_parent_call ON agent_runs (parent_run_id, parent_call_id)
      WHERE parent_run_id IS NOT NULL;
    CREATE UNIQUE INDEX agent_runs_by_step_attempt
      ON agent_runs (workflow_run_id, step_path, step_visit, step_attempt)
      WHERE workflow_run_id IS NOT NULL AND parent_run_id IS NULL;

    CREATE TABLE agent_turns (
      run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
      turn INTEGER NOT NULL,
      messages TEXT NOT NULL,
      text TEXT NOT NULL,
      finish_reason TEXT NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cached_tokens INTEGER NOT NULL,
      total_tokens INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (run_id, turn)
    );

    CREATE TABLE agent_tool_calls (
      run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
      call_id TEXT NOT NULL,
      turn INTEGER NOT NULL,
      position INTEGER NOT NULL,
      name TEXT NOT NULL,
      arguments TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
      output TEXT,
      output_bytes INTEGER,
      truncated INTEGER NOT NULL DEFAULT 0,
      error TEXT,
      started_at TEXT NOT NULL,
      duration_ms INTEGER,
      PRIMARY KEY (run_id, call_id)
    );

    CREATE TABLE agent_run_events (
      run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      data TEXT,
      time TEXT NOT NULL,
      PRIMARY KEY (run_id, seq)
    );
  `,
} satisfies Migration;
