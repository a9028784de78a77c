import type { Migration } from "../migrate.ts";

/**
 * Evaluations (issue 29, docs/evals.md): an eval run keeps its whole dataset (so a restart resumes it without
 * the file), and one row per case and repeat: the run it started (written in the transaction that creates the
 * run, so a crash never starts a second one), its answer and its scores. A case with an end is never run again.
 * `cost_usd` is filled from ai.prices.
 */
export default {
  version: 21,
  name: "evals",
  sql: `
    CREATE TABLE eval_runs (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('agent', 'workflow')),
      target TEXT NOT NULL,
      environment TEXT NOT NULL,
      dataset TEXT NOT NULL,
      dataset_name TEXT NOT NULL,
      dataset_path TEXT,
      model TEXT,
      judge_model TEXT,
      concurrency INTEGER NOT NULL,
      repeat INTEGER NOT NULL,
      baseline_eval_id TEXT,
      max_regression REAL NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'canceled')),
      error TEXT,
      compare TEXT,
      cost_usd REAL,
      created_at TEXT NOT NULL,
      ended_at TEXT
    );
    CREATE INDEX eval_runs_target ON eval_runs (target, id);

    CREATE TABLE eval_cases (
      eval_id TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
      idx INTEGER NOT NULL,
      repeat INTEGER NOT NULL,
      case_id TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'passed', 'failed', 'error')),
      run_id TEXT,
      answer TEXT,
      result TEXT,
      error TEXT,
      scores TEXT NOT NULL DEFAULT '[]',
      score REAL,
      total_tokens INTEGER NOT NULL DEFAULT 0,
      judge_tokens INTEGER NOT NULL DEFAULT 0,
      cost_usd REAL,
      duration_ms INTEGER,
      tool_calls TEXT NOT NULL DEFAULT '[]',
      started_at TEXT,
      ended_at TEXT,
      PRIMARY KEY (eval_id, idx, repeat)
    );
    CREATE INDEX eval_cases_run ON eval_cases (run_id);
  `,
} satisfies Migration;
