/**
 * Comparing two eval runs (docs/evals.md#compare-and-gate): per scorer the change of its mean and pass rate,
 * per case (its repeats averaged) the change of its score; a scorer or the pass rate dropping by more than
 * `max_regression` fails the gate, and the cases that got worse are named.
 */

import type { EvalAggregates, EvalCaseResult, EvalCompare } from "../contract/evals.ts";
import { mean } from "./aggregate.ts";

/** An eval run as compare reads it. */
export interface Compared {
  eval_id: string;
  aggregates: EvalAggregates;
  cases: EvalCaseResult[];
}

// Scores are means of small fractions: a drop equal to the threshold is not past it.
const EPSILON = 1e-9;
const sub = (a: number | null, b: number | null) => a === null || b === null ? null : a - b;
const dropped = (delta: number | null, max: number) => delta !== null && delta < -max - EPSILON;

interface CaseSummary {
  score: number | null;
  passed: boolean;
  scorers: Map<string, number | null>;
}

function byCase(cases: EvalCaseResult[]): Map<string, CaseSummary> {
  const groups = new Map<string, EvalCaseResult[]>();
  for (const c of cases) groups.set(c.case_id, [...groups.get(c.case_id) ?? [], c]);
  const out = new Map<string, CaseSummary>();
  for (const [id, rs] of groups) {
    const names = new Set(rs.flatMap((r) => r.scores.map((s) => s.scorer)));
    out.set(id, {
      score: mean(rs.flatMap((r) => r.score ?? [])),
      passed: rs.every((r) => r.status === "passed"),
      scorers: new Map(
        [...names].map((
          n,
        ) => [
          n,
          mean(rs.flatMap((r) => r.scores.filter((s) => s.scorer === n)).flatMap((s) => s.score ?? [])),
        ]),
      ),
    });
  }
  return out;
}

/** Compares `head` with `base`: the deltas, and whether anything dropped past `maxRegression`. */
export function compareEvals(base: Compared, head: Compared, maxRegression: number): EvalCompare {
  const names = [...new Set([...base.aggregates.scorers, ...head.aggregates.scorers].map((s) => s.scorer))];
  const scorers = names.map((scorer) => {
    const b = base.aggregates.scorers.find((s) => s.scorer === scorer);
    const h = head.aggregates.scorers.find((s) => s.scorer === scorer);
    const delta = sub(h?.mean ?? null, b?.mean ?? null);
    const passDelta = sub(h?.pass_rate ?? null, b?.pass_rate ?? null);
    return {
      scorer,
      base_mean: b?.mean ?? null,
      head_mean: h?.mean ?? null,
      delta,
      base_pass_rate: b?.pass_rate ?? null,
      head_pass_rate: h?.pass_rate ?? null,
      pass_rate_delta: passDelta,
      regressed: dropped(delta, maxRegression) || dropped(passDelta, maxRegression),
    };
  });
  const b = byCase(base.cases), h = byCase(head.cases);
  const cases = [...h].filter(([id]) => b.has(id)).map(([id, hc]) => {
    const bc = b.get(id)!;
    const delta = sub(hc.score, bc.score);
    const names = new Set([...bc.scorers.keys(), ...hc.scorers.keys()]);
    return {
      case_id: id,
      base_score: bc.score,
      head_score: hc.score,
      delta,
      base_passed: bc.passed,
      head_passed: hc.passed,
      regressed: (bc.passed && !hc.passed) || dropped(delta, maxRegression),
      scorers: Object.fromEntries(
        [...names].map((n) => [n, sub(hc.scorers.get(n) ?? null, bc.scorers.get(n) ?? null)]),
      ),
    };
  });
  const passRate = sub(head.aggregates.pass_rate, base.aggregates.pass_rate);
  return {
    base_eval_id: base.eval_id,
    head_eval_id: head.eval_id,
    max_regression: maxRegression,
    regressed: scorers.some((s) => s.regressed) || dropped(passRate, maxRegression),
    pass_rate: { base: base.aggregates.pass_rate, head: head.aggregates.pass_rate, delta: passRate },
    scorers,
    cases,
    regressed_cases: cases.filter((c) => c.regressed).map((c) => c.case_id),
    only_in_base: [...b.keys()].filter((id) => !h.has(id)),
    only_in_head: [...h.keys()].filter((id) => !b.has(id)),
  };
}
