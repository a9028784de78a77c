/**
 * The eval runs' ledger (migration 0021): the only code that reads or writes eval_runs and eval_cases. A
 * case's run id is written inside the transaction that creates the run (`claim`), so after a crash the case
 * finds its run again instead of starting another; a case with an end is never run again.
 */

import { ulid } from "ulid";
import type { EvalCompare, EvalDataset, EvalScore } from "../contract/evals.ts";
import { type Database, transaction } from "../db/database.ts";
import { Statements } from "../db/statements.ts";

export type EvalKind = "agent" | "workflow";
export type EvalStatus = "running" | "completed" | "failed" | "canceled";
export type CaseStatus = "pending" | "running" | "passed" | "failed" | "error";

export interface EvalRunRow {
  id: string;
  kind: EvalKind;
  target: string;
  environment: string;
  /** JSON of the EvalDataset the run was started with. */
  dataset: string;
  dataset_name: string;
  dataset_path: string | null;
  model: string | null;
  judge_model: string | null;
  concurrency: number;
  repeat: number;
  baseline_eval_id: string | null;
  max_regression: number;
  status: EvalStatus;
  error: string | null;
  /** JSON of the EvalCompare with the baseline, once the run has ended. */
  compare: string | null;
  cost_usd: number | null;
  created_at: string;
  ended_at: string | null;
}

export interface EvalCaseRow {
  eval_id: string;
  idx: number;
  repeat: number;
  case_id: string;
  status: CaseStatus;
  run_id: string | null;
  answer: string | null;
  result: string | null;
  error: string | null;
  scores: string;
  score: number | null;
  total_tokens: number;
  judge_tokens: number;
  cost_usd: number | null;
  duration_ms: number | null;
  tool_calls: string;
  started_at: string | null;
  ended_at: string | null;
}

/** A new eval run's fields (the ledger adds its id, status, cases and times). */
export interface NewEvalRun {
  kind: EvalKind;
  target: string;
  environment: string;
  dataset: EvalDataset;
  datasetName: string;
  datasetPath: string | null;
  model: string | null;
  judgeModel: string | null;
  concurrency: number;
  repeat: number;
  baseline: string | null;
  maxRegression: number;
}

/** What a case ended with. */
export interface CaseEnd {
  status: Exclude<CaseStatus, "pending" | "running">;
  answer: string | null;
  result: unknown;
  error: { code: string; message: string } | null;
  scores: EvalScore[];
  score: number | null;
  totalTokens: number;
  judgeTokens: number;
  /** Its run's cost and the judge's (USD); null when a model has no price. */
  costUsd: number | null;
  durationMs: number | null;
  toolCalls: Array<{ name: string; status: string; error: string | null }>;
}

/** A case to address: its eval run, its position in the dataset and its repeat. */
export interface CaseKey {
  evalId: string;
  idx: number;
  repeat: number;
}

const now = () => new Date().toISOString();

/** Reads and writes of the eval tables. */
export class EvalLedger {
  #db: Database;
  #q: Statements;

  constructor(db: Database) {
    this.#db = db;
    this.#q = new Statements(db);
  }

  /** Creates a running eval run with a pending row per case and repeat. */
  create(r: NewEvalRun): EvalRunRow {
    const id = `eval_${ulid()}`;
    transaction(this.#db, () => {
      this.#q.run(
        `INSERT INTO eval_runs (id, kind, target, environment, dataset, dataset_name, dataset_path, model,
           judge_model, concurrency, repeat, baseline_eval_id, max_regression, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)`,
        id,
        r.kind,
        r.target,
        r.environment,
        JSON.stringify(r.dataset),
        r.datasetName,
        r.datasetPath,
        r.model,
        r.judgeModel,
        r.concurrency,
        r.repeat,
        r.baseline,
        r.maxRegression,
        now(),
      );
      for (let repeat = 0; repeat < r.repeat; repeat++) {
        r.dataset.cases.forEach((c, idx) =>
          this.#q.run(
            "INSERT INTO eval_cases (eval_id, idx, repeat, case_id, status) VALUES (?, ?, ?, ?, 'pending')",
            id,
            idx,
            repeat,
            c.id!,
          )
        );
      }
    });
    return this.get(id)!;
  }

  get(id: string): EvalRunRow | undefined {
    return this.#q.get<EvalRunRow>("SELECT * FROM eval_runs WHERE id = ?", id);
  }

  /** Eval runs, newest first; `cursor` is the last id of the previous page. */
  list(q: { target?: string; status?: EvalStatus; cursor?: string; limit: number }): EvalRunRow[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.target) where.push("target = ?"), params.push(q.target);
    if (q.status) where.push("status = ?"), params.push(q.status);
    if (q.cursor) where.push("id < ?"), params.push(q.cursor);
    return this.#q.all<EvalRunRow>(
      `SELECT * FROM eval_runs ${
        where.length ? `WHERE ${where.join(" AND ")}` : ""
      } ORDER BY id DESC LIMIT ?`,
      ...params,
      q.limit,
    );
  }

  /** The ids of the eval runs still running (a crash left them so: they resume). */
  running(): string[] {
    return this.#q.all<{ id: string }>("SELECT id FROM eval_runs WHERE status = 'running' ORDER BY id")
      .map((r) => r.id);
  }

  cases(evalId: string): EvalCaseRow[] {
    return this.#q.all<EvalCaseRow>(
      "SELECT * FROM eval_cases WHERE eval_id = ? ORDER BY repeat, idx",
      evalId,
    );
  }

  /**
   * Inside the transaction creating run `runId` for a case: the run the case already has (create nothing),
   * else undefined after recording `runId` as the case's run.
   */
  claim(key: CaseKey, runId: string): string | undefined {
    const row = this.#q.get<{ run_id: string | null }>(
      "SELECT run_id FROM eval_cases WHERE eval_id = ? AND idx = ? AND repeat = ?",
      key.evalId,
      key.idx,
      key.repeat,
    );
    if (row?.run_id) return row.run_id;
    this.#q.run(
      `UPDATE eval_cases SET run_id = ?, status = 'running', started_at = ?
       WHERE eval_id = ? AND idx = ? AND repeat = ?`,
      runId,
      now(),
      key.evalId,
      key.idx,
      key.repeat,
    );
    return undefined;
  }

  /** Records a case's end: its answer, scores and usage. */
  finishCase(key: CaseKey, end: CaseEnd): void {
    this.#q.run(
      `UPDATE eval_cases SET status = ?, answer = ?, result = ?, error = ?, scores = ?, score = ?, total_tokens = ?,
         judge_tokens = ?, cost_usd = ?, duration_ms = ?, tool_calls = ?, started_at = COALESCE(started_at, ?), ended_at = ?
       WHERE eval_id = ? AND idx = ? AND repeat = ?`,
      end.status,
      end.answer,
      end.result === undefined ? null : JSON.stringify(end.result),
      end.error && JSON.stringify(end.error),
      JSON.stringify(end.scores),
      end.score,
      end.totalTokens,
      end.judgeTokens,
      end.costUsd,
      end.durationMs,
      JSON.stringify(end.toolCalls),
      now(),
      now(),
      key.evalId,
      key.idx,
      key.repeat,
    );
  }

  /** Ends an eval run, with its comparison to its baseline when it has one. */
  finish(
    id: string,
    end: {
      status: Exclude<EvalStatus, "running">;
      error?: { code: string; message: string };
      compare?: EvalCompare;
    },
  ): void {
    this.#q.run(
      "UPDATE eval_runs SET status = ?, error = ?, compare = ?, ended_at = ? WHERE id = ? AND status = 'running'",
      end.status,
      end.error ? JSON.stringify(end.error) : null,
      end.compare ? JSON.stringify(end.compare) : null,
      now(),
      id,
    );
  }
}
