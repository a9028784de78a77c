/**
 * Concurrency admission as pure functions (docs/workflows.md#flow-control, docs/agents.md#concurrency), shared
 * by workflow runs (the engine) and agent runs: whether a new run may start at once, and which waiting runs take
 * the slots a finished run gave back. Runs are ranked by priority plus aging (one level per AGING_MS waited, so
 * low priority is never starved), then by arrival; within a key a blocked run blocks the ones ranked after it,
 * so a key is served first-in first-out among equals.
 */

/** One key a run holds or waits for, and the limit its workflow gives it. */
export interface KeySlot {
  key: string;
  limit: number;
}

/** A waiting run's row for one key, as the ledger keeps it (`run_concurrency`). */
export interface Waiter {
  seq: number;
  run_id: string;
  key: string;
  lim: number;
  priority: number;
  queued_ms: number;
}

/** How busy a key is: runs holding it and runs waiting for it. */
export interface KeyUsage {
  held: number;
  waiting: number;
}

/** Waiting this long raises a run's priority by one level. */
export const AGING_MS = 60_000;

/** A run's priority after aging: its own plus one per AGING_MS it waited. */
export function agedPriority(priority: number, queuedMs: number, now: number): number {
  return priority + Math.floor(Math.max(0, now - queuedMs) / AGING_MS);
}

/** The keys that keep a new run from starting now: full, or with runs already waiting (they go first). */
export function blockedKeys(slots: KeySlot[], usage: (key: string) => KeyUsage): KeySlot[] {
  return slots.filter((s) => {
    const u = usage(s.key);
    return u.held >= s.limit || u.waiting > 0;
  });
}

/** The waiting runs to admit now, best ranked first, given how many runs hold each key. */
export function pickAdmissions(waiters: Waiter[], held: (key: string) => number, now: number): string[] {
  const runs = new Map<string, Waiter[]>();
  for (const w of waiters) runs.set(w.run_id, [...(runs.get(w.run_id) ?? []), w]);
  const rank = (ws: Waiter[]) => ({
    priority: agedPriority(ws[0].priority, ws[0].queued_ms, now),
    seq: Math.min(...ws.map((w) => w.seq)),
  });
  const ranked = [...runs.values()].map((ws) => ({ ws, ...rank(ws) }))
    .sort((a, b) => b.priority - a.priority || a.seq - b.seq);
  const taken = new Map<string, number>();
  const blocked = new Set<string>();
  const admitted: string[] = [];
  for (const { ws } of ranked) {
    const fits = ws.every((w) => !blocked.has(w.key) && (taken.get(w.key) ?? held(w.key)) < w.lim);
    if (!fits) {
      for (const w of ws) blocked.add(w.key);
      continue;
    }
    for (const w of ws) taken.set(w.key, (taken.get(w.key) ?? held(w.key)) + 1);
    admitted.push(ws[0].run_id);
  }
  return admitted;
}
