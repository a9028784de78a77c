/**
 * Rate-limit decisions as a pure function (docs/workflows.md#flow-control): a sliding window, so any span of
 * `period` holds at most `limit` starts — not a fixed minute that lets 2×limit through across its edge. The
 * caller keeps the starts (and the times promised to earlier waiters) where every process sees them: the ledger.
 */

/** A rate limit, evaluated: at most `limit` starts in any window of `periodMs`. */
export interface RateSpec {
  limit: number;
  periodMs: number;
}

/**
 * The earliest instant at or after `now` at which one more start keeps every window of the spec's length at
 * `limit` or fewer, given `times`: the starts so far and the instants promised to the waiters ahead (which go
 * first, so the answer is never before the last of them). `now` itself when it fits now.
 */
export function nextStartAt(times: readonly number[], spec: RateSpec, now: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  const m = sorted.length;
  let at = Math.max(now, m > 0 ? sorted[m - 1] : now);
  // With the new start after all of them, the window ending at it must drop the (m - limit + 1)-th latest.
  if (m >= spec.limit) at = Math.max(at, sorted[m - spec.limit] + spec.periodMs);
  return at;
}
