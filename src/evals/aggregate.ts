/**
 * The aggregates of an eval run (docs/evals.md#aggregates): per scorer the mean, p50, p90 and pass rate of its
 * scores (and of its measured values), per tool its calls, success rate and errors ("tool effectiveness").
 */

import type {
  EvalAggregates,
  EvalCaseResult,
  EvalScorerAggregate,
  EvalToolEffectiveness,
} from "../contract/evals.ts";

/** The mean of some numbers; null for none. */
export function mean(xs: number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

/** The p-th percentile (0–100) by nearest rank; null for none. */
export function percentile(xs: number[], p: number): number | null {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

function scorerAggregate(scorer: string, cases: EvalCaseResult[]): EvalScorerAggregate {
  const scores = cases.flatMap((c) => c.scores.filter((s) => s.scorer === scorer));
  const scored = scores.filter((s) => !s.error);
  const values = scored.flatMap((s) => s.value ?? []);
  const numbers = scored.flatMap((s) => s.score ?? []);
  return {
    scorer,
    count: scored.length,
    errors: scores.length - scored.length,
    mean: mean(numbers),
    p50: percentile(numbers, 50),
    p90: percentile(numbers, 90),
    pass_rate: scores.length ? scores.filter((s) => s.passed).length / scores.length : null,
    value_mean: mean(values),
    value_p50: percentile(values, 50),
    value_p90: percentile(values, 90),
  };
}

function toolEffectiveness(cases: EvalCaseResult[]): EvalToolEffectiveness[] {
  const byTool = new Map<
    string,
    { calls: number; ok: number; failed: number; errors: Map<string, number> }
  >();
  for (const call of cases.flatMap((c) => c.tool_calls)) {
    const t = byTool.get(call.name) ?? { calls: 0, ok: 0, failed: 0, errors: new Map() };
    byTool.set(call.name, t);
    t.calls++;
    if (call.status === "completed") t.ok++;
    if (call.status === "failed") {
      t.failed++;
      const message = (call.error ?? "failed").slice(0, 200);
      t.errors.set(message, (t.errors.get(message) ?? 0) + 1);
    }
  }
  return [...byTool].sort(([a], [b]) => a.localeCompare(b)).map(([tool, t]) => ({
    tool,
    calls: t.calls,
    succeeded: t.ok,
    failed: t.failed,
    success_rate: t.ok + t.failed ? t.ok / (t.ok + t.failed) : null,
    errors: [...t.errors].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([message, count]) => ({
      message,
      count,
    })),
  }));
}

/** The aggregates of an eval run's ended cases. */
export function aggregate(cases: EvalCaseResult[]): EvalAggregates {
  const ended = cases.filter((c) => c.status !== "pending" && c.status !== "running");
  const scorers = [...new Set(ended.flatMap((c) => c.scores.map((s) => s.scorer)))];
  const passed = ended.filter((c) => c.status === "passed").length;
  return {
    cases: ended.length,
    passed,
    failed: ended.filter((c) => c.status === "failed").length,
    errors: ended.filter((c) => c.status === "error").length,
    pass_rate: ended.length ? passed / ended.length : null,
    mean_score: mean(ended.flatMap((c) => c.score ?? [])),
    scorers: scorers.map((s) => scorerAggregate(s, ended)),
    tools: toolEffectiveness(ended),
  };
}
