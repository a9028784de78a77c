/**
 * A step's flow control (docs/workflows.md#flow-control): its concurrency keys, priority and rate limit,
 * evaluated for one attempt; the holder id its rows carry in the ledger's flow-control tables; and the commands
 * that admit an attempt that waited for its keys. The decision whether an attempt starts is `step_gate.ts`'s.
 */

import { errorMessage } from "../../errors.ts";
import { parseTemplate, renderString } from "../expr.ts";
import { parseDuration } from "../../lib/duration.ts";
import { DEFAULT_PRIORITY } from "../definition/flow_control.ts";
import type { State, WorkflowDefinition } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import type { KeySlot } from "../../lib/concurrency.ts";
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

const inputOf = (scope: Scope) => (scope.workflow as { input?: unknown } | undefined)?.input;

/** One plain path (`input.customer`, `$input.customer`, `prep.who`): read without JSONata. */
const PLAIN_PATH = /^\s*(\$?)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*$/;

/**
 * A template's value without JSONata, when each of its expressions is a plain path to a string or a number (the
 * usual key: `${input.customer}`, `customer-${prep.who}`); undefined when one needs JSONata.
 */
function plainRender(template: string, scope: Scope): string | undefined {
  let out = "";
  for (const p of parseTemplate(template)) {
    if ("text" in p) {
      out += p.text;
      continue;
    }
    const m = PLAIN_PATH.exec(p.expr);
    if (!m) return undefined;
    const [head, ...rest] = m[2].split(".");
    // As JSONata sees them (`keyOf`): the data is the scope with `input`; the bindings are `$input` and `$ctx`.
    let v: unknown = head === "input"
      ? inputOf(scope)
      : m[1]
      ? (head === "ctx" ? scope : undefined)
      : scope[head];
    for (const k of rest) {
      v = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Scope)[k] : undefined;
    }
    if (typeof v !== "string" && typeof v !== "number") return undefined;
    out += String(v);
  }
  return out;
}

/**
 * A key as the ledger holds it: `step:<value>` of a template over the attempt's data (the run's input as
 * `input`, earlier steps' outputs), shared by every workflow naming it; `step:<workflow>/<step id>` without one.
 * Undefined when the template needs JSONata (`keyOf`).
 */
function keyNow(template: string | undefined, scope: Scope, own: string): string | undefined {
  if (template === undefined) return `step:${own}`;
  const v = plainRender(template, scope);
  return v === undefined ? undefined : `step:${v}`;
}

/** `keyNow`, else the template rendered by JSONata. */
async function keyOf(template: string | undefined, scope: Scope, own: string): Promise<string> {
  const now = keyNow(template, scope, own);
  if (now !== undefined) return now;
  const input = inputOf(scope);
  const v = await renderString(template!, { data: { ...scope, input }, bindings: { ctx: scope, input } });
  return `step:${typeof v === "string" ? v : JSON.stringify(v ?? null)}`;
}

/** What evaluating a step's limits reads: the step, its attempt's scope data, the run's priority. */
export interface FlowInput {
  def: WorkflowDefinition;
  state: State;
  scope: Scope;
  /** The priority the run was admitted with, when it took concurrency keys. */
  runPriority?: number;
}

/** A step's limits from its keys as the ledger holds them (the priority: the step's, the run's, the workflow's). */
function flowOf({ def, state, runPriority }: FlowInput, keys: string[], rateKey?: string): StepFlow {
  const byKey = new Map<string, number>();
  (state.concurrency ?? []).forEach((c, i) =>
    byKey.set(keys[i], Math.min(c.limit, byKey.get(keys[i]) ?? Infinity))
  );
  const r = state.rate_limit;
  return {
    slots: [...byKey].map(([key, limit]) => ({ key, limit })),
    priority: state.priority ?? runPriority ?? def.priority ?? DEFAULT_PRIORITY,
    ...(r && rateKey ? { rate: { key: rateKey, limit: r.limit, periodMs: parseDuration(r.period)! } } : {}),
  };
}

/** A step's limits evaluated at once, when no key template needs JSONata (so an eager claim can gate it). */
export function stepFlowNow(f: FlowInput): StepFlow | undefined {
  const own = `${f.def.id}/${f.state.id}`;
  const keys = (f.state.concurrency ?? []).map((c) => keyNow(c.key, f.scope, own));
  const rateKey = f.state.rate_limit && keyNow(f.state.rate_limit.key, f.scope, own);
  if (keys.includes(undefined) || (f.state.rate_limit && rateKey === undefined)) return undefined;
  return flowOf(f, keys as string[], rateKey);
}

/** Evaluates a step's limits for an attempt over its scope's data. Never throws: a failing template is `error`. */
export async function stepFlow(f: FlowInput): Promise<StepFlow> {
  const own = `${f.def.id}/${f.state.id}`;
  try {
    const keys: string[] = [];
    for (const c of f.state.concurrency ?? []) keys.push(await keyOf(c.key, f.scope, own));
    const rateKey = f.state.rate_limit && await keyOf(f.state.rate_limit.key, f.scope, own);
    return flowOf(f, keys, rateKey);
  } catch (err) {
    return { slots: [], priority: flowOf(f, []).priority, error: errorMessage(err) };
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
