/** How `stn eval` shows eval runs, their cases and comparisons to people (the --json forms are the API's). */

import type { EvalCompare, EvalRun } from "../contract/evals.ts";
import { fields, type Style, table } from "./output.ts";

const num = (n: number | null | undefined, digits = 2) =>
  n === null || n === undefined ? "-" : n.toFixed(digits);
const pct = (n: number | null | undefined) => n === null || n === undefined ? "-" : `${Math.round(n * 100)}%`;
const signed = (n: number | null) => n === null ? "-" : `${n >= 0 ? "+" : ""}${n.toFixed(2)}`;

/** An eval run: its summary, per-scorer aggregates, tool effectiveness and (when it has them) each case. */
export function evalLines(run: EvalRun, style: Style): string[] {
  const a = run.aggregates;
  const out = fields([
    ["eval", run.eval_id],
    ["target", `${run.kind} ${run.target} (${run.environment})`],
    ["dataset", `${run.dataset.name}: ${run.dataset.cases} case(s) × ${run.repeat}`],
    ["status", run.error ? `${run.status}: ${run.error.message}` : run.status],
    [
      "cases",
      `${run.cases_done}/${run.cases_total} done: ${a.passed} passed, ${a.failed} failed, ${a.errors} error`,
    ],
    ["pass rate", pct(a.pass_rate)],
    ["mean score", num(a.mean_score)],
    ["tokens", String(run.total_tokens)],
  ]);
  if (a.scorers.length) {
    out.push(
      "",
      ...table(
        ["SCORER", "MEAN", "P50", "P90", "PASS", "ERRORS", "VALUE P50", "VALUE P90"],
        a.scorers.map((s) => [
          s.scorer,
          num(s.mean),
          num(s.p50),
          num(s.p90),
          pct(s.pass_rate),
          String(s.errors),
          num(s.value_p50, 0),
          num(s.value_p90, 0),
        ]),
      ),
    );
  }
  if (a.tools.length) {
    out.push(
      "",
      ...table(
        ["TOOL", "CALLS", "SUCCESS", "TOP ERROR"],
        a.tools.map((t) => [t.tool, String(t.calls), pct(t.success_rate), t.errors[0]?.message ?? ""]),
      ),
    );
  }
  if (run.cases?.length) {
    out.push(
      "",
      ...table(
        ["CASE", "REPEAT", "STATUS", "SCORE", "RUN", "WHY"],
        run.cases.map((c) => [
          c.case_id,
          String(c.repeat),
          c.status === "passed"
            ? style.green(c.status)
            : c.status === "pending"
            ? c.status
            : style.red(c.status),
          num(c.score),
          c.run_id ?? "-",
          c.error?.message ??
            c.scores.filter((s) => !s.passed).map((s) =>
              `${s.scorer}: ${s.error ? `${s.error.code}: ${s.error.message}` : s.reasoning ?? ""}`
            )
              .join("; ").slice(0, 120),
        ]),
      ),
    );
  }
  if (run.baseline?.compare) out.push("", ...compareLines(run.baseline.compare, style));
  return out;
}

/** A comparison: the pass rate, per-scorer deltas, and the cases that got worse. */
export function compareLines(c: EvalCompare, style: Style): string[] {
  const out = [
    `${c.head_eval_id} against ${c.base_eval_id} (max regression ${c.max_regression}):`,
    `pass rate ${pct(c.pass_rate.base)} → ${pct(c.pass_rate.head)} (${signed(c.pass_rate.delta)})`,
    "",
    ...table(
      ["SCORER", "BASE", "HEAD", "DELTA", "PASS BASE", "PASS HEAD", ""],
      c.scorers.map((s) => [
        s.scorer,
        num(s.base_mean),
        num(s.head_mean),
        signed(s.delta),
        pct(s.base_pass_rate),
        pct(s.head_pass_rate),
        s.regressed ? style.red("regressed") : "",
      ]),
    ),
  ];
  const worse = c.cases.filter((x) => x.regressed);
  if (worse.length) {
    out.push("", style.red(`${worse.length} case(s) got worse:`));
    out.push(...table(
      ["CASE", "BASE", "HEAD", "DELTA", "PASSED"],
      worse.map((x) => [
        x.case_id,
        num(x.base_score),
        num(x.head_score),
        signed(x.delta),
        `${x.base_passed ? "yes" : "no"} → ${x.head_passed ? "yes" : "no"}`,
      ]),
    ));
  }
  return out;
}

/** Eval runs as a table. */
export function evalListLines(runs: EvalRun[]): string[] {
  return table(
    ["EVAL", "TARGET", "DATASET", "STATUS", "CASES", "PASS", "SCORE", "CREATED"],
    runs.map((r) => [
      r.eval_id,
      r.target,
      r.dataset.name,
      r.status,
      `${r.cases_done}/${r.cases_total}`,
      pct(r.aggregates.pass_rate),
      num(r.aggregates.mean_score),
      r.created_at,
    ]),
  );
}
