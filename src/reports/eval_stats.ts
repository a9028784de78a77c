/**
 * The numbers an eval report draws and prints beyond the eval run's own aggregates: score and value
 * distributions as histogram bins, and the formats of scores, rates and deltas.
 */

import type { EvalCaseResult, EvalRun } from "../contract/evals.ts";

/** One bar of a histogram: the values in [from, to) (the last bar includes `to`). */
export interface Bin {
  from: number;
  to: number;
  count: number;
}

/** A scorer's distribution over an eval run's cases: its scores (0–1) and, for measuring scorers, its values. */
export interface Distribution {
  scorer: string;
  scores: Bin[];
  /** The measured values (latency ms, tokens), when the scorer measures any. */
  values?: { unit: string; bins: Bin[] };
}

const SCORE_BINS = 10;
const VALUE_BINS = 8;

/** `values` counted into `n` equal bins over [min, max] (one bin when every value is the same). */
export function histogram(values: number[], n: number, range?: [number, number]): Bin[] {
  if (values.length === 0) return [];
  const [min, max] = range ?? [Math.min(...values), Math.max(...values)];
  if (max === min) return [{ from: min, to: max, count: values.length }];
  const width = (max - min) / n;
  const bins = Array.from(
    { length: n },
    (_, i) => ({ from: min + i * width, to: min + (i + 1) * width, count: 0 }),
  );
  for (const v of values) bins[Math.min(n - 1, Math.max(0, Math.floor((v - min) / width)))].count++;
  return bins;
}

const UNITS: Record<string, string> = { latency: "ms", tokens: "tokens" };

/** Each scorer's distribution over the run's cases, in the order of its aggregates. */
export function distributions(run: Pick<EvalRun, "aggregates">, cases: EvalCaseResult[]): Distribution[] {
  return run.aggregates.scorers.map((a) => {
    const scores = cases.flatMap((c) => c.scores.filter((s) => s.scorer === a.scorer));
    const scored = scores.map((s) => s.score).filter((s): s is number => s !== null);
    const measured = scores.map((s) => s.value).filter((v): v is number => v !== null);
    return {
      scorer: a.scorer,
      scores: histogram(scored, SCORE_BINS, [0, 1]),
      ...(measured.length
        ? { values: { unit: UNITS[a.scorer] ?? "", bins: histogram(measured, VALUE_BINS) } }
        : {}),
    };
  });
}

/** A score (0–1) with two decimals; `–` when there is none. */
export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined ? "–" : score.toFixed(2);
}

/** A rate (0–1) as a percentage; `–` when there is none. */
export function formatRate(rate: number | null | undefined): string {
  return rate === null || rate === undefined
    ? "–"
    : `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)}%`;
}

/** A change with its sign (`+0.05`, `−0.10`); `–` when there is none. */
export function formatDelta(delta: number | null | undefined): string {
  if (delta === null || delta === undefined) return "–";
  const text = Math.abs(delta).toFixed(2);
  return delta > 0 ? `+${text}` : delta < 0 ? `−${text}` : `±${text}`;
}

/** A measured value with its unit, rounded (`1234 ms`); `–` when there is none. */
export function formatValue(value: number | null | undefined, scorer: string): string {
  if (value === null || value === undefined) return "–";
  const unit = UNITS[scorer];
  return `${Math.round(value)}${unit ? ` ${unit}` : ""}`;
}
