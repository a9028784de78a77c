/**
 * Concurrency admission against the ledger (docs/workflows.md#flow-control): a run's keys (concurrency, rate
 * limit) evaluated from its input, and, when a run that held keys ends or a rate window moves on, the waiting
 * runs and step attempts that now fit admitted in the same transaction. The decisions are the pure functions of
 * `lib/concurrency.ts` and `transitions.ts`.
 */

import { parseDuration } from "../../lib/duration.ts";
import { keyOf, RATE_KEY } from "./flow_keys.ts";
import { DEFAULT_PRIORITY } from "../definition/flow_control.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";
import type { Command } from "./commands.ts";
import { type KeySlot, type KeyUsage, pickAdmissions, type Waiter } from "../../lib/concurrency.ts";
import type { StepMessage } from "./dispatch.ts";
import type { RunHead } from "./ledger.ts";
import type { Repository } from "./repository.ts";
import type { RunState, TransitionEnv } from "./run_state.ts";
import { admitRun } from "./transitions.ts";
import { cancelRun } from "./fencing.ts";
import { admitStep, holderAttempt } from "./step_limits.ts";

/** How many waiters per key the start-up pass reads (a newer definition may have raised a key's limit). */
const ADMIT_AT_START = 1000;

/** A run's concurrency keys, priority and singleton key, before its start is committed. */
export interface RunAdmission {
  slots: KeySlot[];
  priority: number;
  singleton?: { key: string; mode: "skip" | "cancel_previous" };
}

/** Evaluates a definition's concurrency keys over a run's input (keys are per workflow: `<id>` or `<id>/<value>`). */
export async function runAdmission(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
  priority?: number,
): Promise<RunAdmission | undefined> {
  if (!def.concurrency && !def.singleton && !def.rate_limit) return undefined;
  const byKey = new Map<string, number>();
  for (const c of def.concurrency ?? []) {
    const key = await keyOf(def, c.key, input);
    byKey.set(key, Math.min(c.limit, byKey.get(key) ?? Infinity));
  }
  const slots: KeySlot[] = [...byKey].map(([key, limit]) => ({ key, limit }));
  const r = def.rate_limit;
  if (r) {
    const key = RATE_KEY + await keyOf(def, r.key, input);
    slots.push({ key, limit: r.limit, periodMs: parseDuration(r.period)! });
  }
  const s = def.singleton;
  return {
    slots,
    priority: priority ?? def.priority ?? DEFAULT_PRIORITY,
    // `!` keeps a singleton key apart from every concurrency key of the workflow.
    ...(s ? { singleton: { key: await keyOf(def, s.key, input, "!"), mode: s.mode } } : {}),
  };
}

/** What a start decides about its singleton key: the active run to answer instead, or runs to cancel first. */
export interface SingletonStart {
  /** skip: the key's active run (nothing is started). */
  active?: string;
  /** cancel_previous: the commands canceling the key's active runs. */
  commands: Command[];
  /** The runs those commands cancel. */
  canceled: string[];
  /** The key the new run records. */
  slot?: KeySlot;
}

/** Decides a start's singleton key inside the creating transaction. */
export function singletonStart(deps: AdmissionDeps, a: RunAdmission | undefined): SingletonStart {
  const out: SingletonStart = { commands: [], canceled: [] };
  if (!a?.singleton) return out;
  const { key, mode } = a.singleton;
  const runs = deps.repo.concurrency.runsOn(key);
  if (runs.length > 0 && mode === "skip") return { ...out, active: runs[0] };
  for (const runId of runs) {
    const state = deps.snapshot(runId);
    if (!state) continue;
    out.commands.push(...cancelRun(state, `canceled: a newer run took singleton key ${key}`, deps.env()));
    out.canceled.push(runId);
  }
  return { ...out, slot: { key, limit: 1 } };
}

/** Key usage as the ledger holds it plus what `pending` commands (not applied yet) enqueue. */
export function usageWith(read: (key: string) => KeyUsage, pending: Command[]): (key: string) => KeyUsage {
  return (key) => {
    const u = { ...read(key) };
    for (const c of pending) {
      if (c.kind !== "enqueue_concurrency" || !c.slots.some((s) => s.key === key)) continue;
      if (c.held) u.held++;
      else u.waiting++;
    }
    return u;
  };
}

/**
 * The top-level step a waiting run goes on at when admitted: a retried run's step it stopped at, a forked run's
 * fork point; undefined for a new run (its first step).
 */
export function resumeAt(repo: Repository, run: RunHead): string | undefined {
  const last = repo.attempts.list(run.id).filter((a) => a.scope === "").at(-1);
  if (!last) return undefined;
  return last.status === "completed" ? run.forked_from ?? undefined : last.step_id;
}

/** What admitting runs wrote: its commands (already applied) and the step messages to publish. */
export interface Admitted {
  commands: Command[];
  messages: StepMessage[];
}

/** What admission needs from the engine core. */
export interface AdmissionDeps {
  repo: Repository;
  snapshot: (runId: string) => RunState | undefined;
  env: () => TransitionEnv;
}

/** Admits waiting runs when keys free up, inside the transaction that freed them. */
export class Admission {
  #deps: AdmissionDeps;

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
  }

  /** Decides a start's singleton key inside the creating transaction (`singletonStart`). */
  singleton(a: RunAdmission | undefined): SingletonStart {
    return singletonStart(this.#deps, a);
  }

  /**
   * Admits the runs waiting for these keys that fit now; adds their commands (applied) and step messages to `out`. A
   * key given n times (n runs released it) has at most n slots more, so only its first n waiters are read
   * (`perKey` overrides n).
   */
  admit(keys: string[], out: Admitted = { commands: [], messages: [] }, perKey?: number): Admitted {
    const { repo, snapshot, env } = this.#deps;
    const e = env();
    const freed = new Map<string, number>();
    for (const k of keys) freed.set(k, (freed.get(k) ?? 0) + 1);
    const waiters = new Map<number, Waiter>();
    for (const [key, n] of freed) {
      for (const w of repo.concurrency.firstWaiting(key, perKey ?? n, e.now)) waiters.set(w.seq, w);
    }
    if (waiters.size === 0) return out;
    const ordered = [...waiters.values()].sort((a, b) => a.seq - b.seq);
    for (const holder of pickAdmissions(ordered, (k) => repo.concurrency.usage(k, e.now).held, e.now)) {
      // A holder is a waiting run, or a step attempt waiting for its step's keys (`step_limits.ts`).
      const attemptId = holderAttempt(holder);
      const step = attemptId === undefined ? undefined : repo.attempts.get(attemptId);
      const state = step ? undefined : snapshot(holder);
      if (!step && !state) continue;
      const commands = step ? admitStep(step, e.now) : admitRun(state!, e, resumeAt(repo, state!.run));
      out.commands.push(...commands);
      out.messages.push(...repo.apply(commands));
    }
    return out;
  }

  /** Admits whatever fits on every key some run waits for (at engine start). */
  admitAll(): Admitted {
    return this.admit(this.#deps.repo.concurrency.waitedFor(), undefined, ADMIT_AT_START);
  }
}
