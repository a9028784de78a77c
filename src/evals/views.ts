/** Eval runs and their cases as the API shows them (src/contract/evals.ts), from their ledger rows. */

import type { EvalCaseResult, EvalDataset, EvalRun } from "../contract/evals.ts";
import { aggregate } from "./aggregate.ts";
import { caseTask } from "./target.ts";
import type { EvalCaseRow, EvalRunRow } from "./ledger.ts";

const parse = <T>(s: string | null): T | null => s === null ? null : JSON.parse(s) as T;

/** A case row with its dataset case, as the API shows it. */
export function caseView(row: EvalCaseRow, dataset: EvalDataset, kind: EvalRun["kind"]): EvalCaseResult {
  const c = dataset.cases[row.idx];
  return {
    eval_id: row.eval_id,
    index: row.idx,
    repeat: row.repeat,
    case_id: row.case_id,
    task: kind === "agent" ? caseTask(c) : c.task ?? null,
    input: c.input ?? null,
    vars: c.vars ?? {},
    ...(c.expected !== undefined && { expected: c.expected }),
    rubric: c.rubric ?? dataset.judge?.rubric ?? null,
    status: row.status,
    run_id: row.run_id,
    answer: row.answer,
    ...(row.result !== null && { result: JSON.parse(row.result) }),
    error: parse(row.error),
    scores: JSON.parse(row.scores),
    score: row.score,
    total_tokens: row.total_tokens,
    cost_usd: row.cost_usd,
    duration_ms: row.duration_ms,
    tool_calls: JSON.parse(row.tool_calls),
    started_at: row.started_at,
    ended_at: row.ended_at,
  };
}

/** An eval run with its aggregates (and its cases when `withCases`). */
export function evalView(row: EvalRunRow, cases: EvalCaseRow[], withCases: boolean): EvalRun {
  const dataset = JSON.parse(row.dataset) as EvalDataset;
  const views = cases.map((c) => caseView(c, dataset, row.kind));
  const ended = views.filter((c) => c.status !== "pending" && c.status !== "running");
  const costs = cases.filter((c) => c.ended_at !== null).map((c) => c.cost_usd);
  return {
    eval_id: row.id,
    kind: row.kind,
    target: row.target,
    environment: row.environment,
    dataset: { name: row.dataset_name, path: row.dataset_path, cases: dataset.cases.length },
    model: row.model,
    judge_model: row.judge_model,
    concurrency: row.concurrency,
    repeat: row.repeat,
    status: row.status,
    error: parse(row.error),
    cases_total: cases.length,
    cases_done: ended.length,
    total_tokens: cases.reduce((n, c) => n + c.total_tokens + c.judge_tokens, 0),
    cost_usd: row.cost_usd ??
      (costs.length && costs.every((c) => c !== null) ? costs.reduce((a, b) => a! + b!, 0) : null),
    aggregates: aggregate(views),
    baseline: row.baseline_eval_id
      ? { eval_id: row.baseline_eval_id, max_regression: row.max_regression, compare: parse(row.compare) }
      : null,
    created_at: row.created_at,
    ended_at: row.ended_at,
    duration_ms: row.ended_at ? Date.parse(row.ended_at) - Date.parse(row.created_at) : null,
    ...(withCases && { cases: views }),
  };
}
