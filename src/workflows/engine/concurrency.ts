/**
 * Concurrency admission as pure functions (docs/workflows.md#flow-control): whether a new run may start at
 * once, and which waiting runs take the slots a finished run gave back. Runs are ranked by priority plus
 * aging (one level per AGING_MS waited, so low priority is never starved), then by arrival; within a key a
 * blocked run blocks the ones ranked after it, so a key is served first-in first-out among equals.
 */

import type { Transition } from "./run_state.ts";

/**
 * One key a run holds or waits for, and the limit its workflow gives it; a rate-limit key has the window
 * (`periodMs`) its limit counts admissions in, and a run "holds" it only by having been admitted there.
 */
export interface KeySlot {
  key: string;
  limit: number;
  periodMs?: number;
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

/** The concurrency part of a new run: its keys (evaluated), its priority, and how busy each key is now. */
export interface NewRunConcurrency {
  slots: KeySlot[];
  priority: number;
  usage: (key: string) => KeyUsage;
  /** The run's singleton key: recorded with its keys, never waited for (the caller skipped or canceled). */
  singleton?: KeySlot;
}

/** Records a new run's keys: held when they all have room, else waited for (status and event); true when held. */
export function enqueueRun(t: Transition, c: NewRunConcurrency): boolean {
  const slots = c.singleton ? [...c.slots, c.singleton] : c.slots;
  if (slots.length === 0) return true;
  const runId = t.state.run.id;
  const blocked = blockedKeys(c.slots, c.usage);
  const held = blocked.length === 0;
  t.emit({
    kind: "enqueue_concurrency",
    runId,
    slots,
    priority: c.priority,
    queuedMs: t.env.now,
    held,
  });
  if (held) return true;
  t.emit({ kind: "set_run_status", runId, status: "waiting_for_concurrency", at: t.at });
  const { key, periodMs } = blocked[0];
  t.event("run_waiting_for_concurrency", null, {
    key,
    reason: periodMs === undefined ? "concurrency" : "rate_limit",
    position: c.usage(key).waiting + 1,
    priority: c.priority,
  });
  return false;
}
