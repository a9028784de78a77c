/**
 * A step's flow control (docs/workflows.md#flow-control): its concurrency keys, priority and rate limit,
 * evaluated for one attempt; the holder id its rows carry in the ledger's flow-control tables; and the commands
 * that admit an attempt that waited for its keys. The decision whether an attempt starts is `step_gate.ts`'s.
 */

import { errorMessage } from "../../errors.ts";
import { renderString } from "../expr.ts";
import { parseDuration } from "../../lib/duration.ts";
import { DEFAULT_PRIORITY } from "../definition/flow_control.ts";
import type { State, WorkflowDefinition } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import type { KeySlot } from "./concurrency.ts";
import type { AttemptRow } from "./ledger.ts";
import type { RateSpec } from "./rate_window.ts";
import type { Transition } from "./run_state.ts";

/** A step's limits evaluated for one attempt: its keys, its priority, its rate limit (or why they failed). */
export interface StepFlow {
  slots: KeySlot[];
  priority: number;
  rate?: RateSpec & { key: string };
  /** The message of a key template that failed: the attempt fails instead of starting. */
  error?: string;
}

const HOLDER = "attempt:";

/** The holder id of a step attempt in `run_concurrency` and `rate_admissions` (a run's is its id). */
export function stepHolder(attemptId: number): string {
  return `${HOLDER}${attemptId}`;
}

/** The attempt a holder id names; undefined for a run's. */
export function holderAttempt(holder: string): number | undefined {
  return holder.startsWith(HOLDER) ? Number(holder.slice(HOLDER.length)) : undefined;
}

/** Whether a state says how many may run at once or how often it may start. */
export function flowControlled(state: State): boolean {
  return state.concurrency !== undefined || state.rate_limit !== undefined;
}

const withFlow = new WeakMap<WorkflowDefinition, boolean>();

/** Whether any state of a definition, at any depth, has flow control (cached per definition object). */
export function hasStepFlow(def: WorkflowDefinition): boolean {
  let known = withFlow.get(def);
  if (known === undefined) {
    const walk = (v: unknown): boolean =>
      Array.isArray(v) ? v.some(walk) : typeof v === "object" && v !== null &&
        ("rate_limit" in v || ("type" in v && "concurrency" in v) || Object.values(v).some(walk));
    known = walk(def.states);
    withFlow.set(def, known);
  }
  return known;
}

/**
 * A key as the ledger holds it: `step:<value>` of a template over the attempt's data (the run's input as
 * `input`, earlier steps' outputs), shared by every workflow naming it; `step:<workflow>/<step id>` without one.
 */
async function keyOf(template: string | undefined, scope: Scope, own: string): Promise<string> {
  if (template === undefined) return `step:${own}`;
  const input = (scope.workflow as { input?: unknown } | undefined)?.input;
  const v = await renderString(template, { data: { ...scope, input }, bindings: { ctx: scope, input } });
  return `step:${typeof v === "string" ? v : JSON.stringify(v ?? null)}`;
}

/**
 * Evaluates a step's limits for an attempt over its scope's data; the priority is the step's, else the run's
 * (`runPriority`, when the run took concurrency keys), else the workflow's. Never throws: a failing key
 * template is the flow's `error`.
 */
export async function stepFlow(
  def: WorkflowDefinition,
  state: State,
  scope: Scope,
  runPriority?: number,
): Promise<StepFlow> {
  const own = `${def.id}/${state.id}`;
  const priority = state.priority ?? runPriority ?? def.priority ?? DEFAULT_PRIORITY;
  try {
    const byKey = new Map<string, number>();
    for (const c of state.concurrency ?? []) {
      const key = await keyOf(c.key, scope, own);
      byKey.set(key, Math.min(c.limit, byKey.get(key) ?? Infinity));
    }
    const r = state.rate_limit;
    return {
      slots: [...byKey].map(([key, limit]) => ({ key, limit })),
      priority,
      ...(r
        ? {
          rate: { key: await keyOf(r.key, scope, own), limit: r.limit, periodMs: parseDuration(r.period)! },
        }
        : {}),
    };
  } catch (err) {
    return { slots: [], priority, error: errorMessage(err) };
  }
}

/** Gives back an ending attempt's keys, its place in their queues and its rate reservation (same transaction). */
export function releaseStep(t: Transition, a: AttemptRow): void {
  if (a.id > 0 && hasStepFlow(t.state.definition)) {
    t.emit({ kind: "release_concurrency", runId: stepHolder(a.id) });
  }
}

/** Admits an attempt that waited for its concurrency keys: it holds them and is scheduled (and published) again. */
export function admitStep(a: AttemptRow, now: number): Command[] {
  if (a.status !== "waiting_for_concurrency") return [];
  return [
    { kind: "acquire_concurrency", runId: stepHolder(a.id) },
    { kind: "admit_attempt", attemptId: a.id, dispatchedAt: now },
    {
      kind: "append_event",
      runId: a.run_id,
      type: "step_admitted",
      step: a.path,
      data: { attempt: a.attempt },
      at: iso(now),
    },
    { kind: "dispatch", attemptId: a.id, runId: a.run_id, path: a.path, attempt: a.attempt },
  ];
}
