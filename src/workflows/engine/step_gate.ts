/**
 * Whether a claimed step attempt starts now under its step's limits (docs/workflows.md#flow-control), decided
 * in the claim's transaction on the station (the one ledger writer), whoever claims: the station's consumer or
 * a `stn worker`. Over a concurrency limit the attempt waits (`waiting_for_concurrency`, admitted by
 * `admission.ts` when a holder ends); over a rate limit it waits for the window on a `retry` timer (the timer
 * that publishes a scheduled attempt at its time, so a restart keeps the wait). Only an attempt's first start
 * is gated: a fan-out parent scheduled again to join, or a claim taken over from a dead worker, goes on with
 * what it holds.
 */

import { iso } from "../../lib/clock.ts";
import type { State, WorkflowDefinition } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import type { Command } from "./commands.ts";
import { blockedKeys } from "../../lib/concurrency.ts";
import type { StepMessage } from "./dispatch.ts";
import { type ClaimDecision, failUnstarted } from "./fencing.ts";
import type { AttemptRow } from "./ledger.ts";
import { nextStartAt } from "./rate_window.ts";
import type { Repository } from "./repository.ts";
import type { RunState, TransitionEnv } from "./run_state.ts";
import {
  flowControlled,
  type FlowInput,
  hasStepFlow,
  type StepFlow,
  stepFlow,
  stepFlowNow,
  stepHolder,
} from "./step_limits.ts";

/** What gating reads from the engine. */
export interface GateDeps {
  repo: Repository;
  /** The definition a run runs (cached while it is active). */
  definition(runId: string): WorkflowDefinition;
  stateOf(a: AttemptRow): State;
  scope(runId: string, scope: string): Scope;
  snapshot(runId: string, ...include: number[]): RunState | undefined;
}

/** The attempt a message would start, and its state, when that state has flow control and never started. */
function gated(deps: GateDeps, m: StepMessage): { a: AttemptRow; state: State } | undefined {
  const a = deps.repo.attempts.get(m.id);
  if (!a || a.started_at !== null || a.run_id !== m.run || !hasStepFlow(deps.definition(a.run_id))) {
    return undefined;
  }
  const state = deps.stateOf(a);
  return flowControlled(state) ? { a, state } : undefined;
}

/** What evaluating the limits of a gated attempt's step reads. */
function flowInput(deps: GateDeps, { a, state }: { a: AttemptRow; state: State }): FlowInput {
  const def = deps.definition(a.run_id);
  // Only a run with concurrency keys has a priority of its own (its start's override), and only a wait uses it.
  const runPriority = state.priority === undefined && state.concurrency && def.concurrency
    ? deps.repo.stepLimits.runPriority(a.run_id)
    : undefined;
  return { def, state, scope: deps.scope(a.run_id, a.scope), runPriority };
}

/**
 * For an eager claim (inside the transaction that scheduled the step, where nothing async can run): the step's
 * limits (none: `{}`), or undefined when a key template needs JSONata, so the step goes through the queue.
 */
export function eagerFlow(deps: GateDeps, m: StepMessage): { flow?: StepFlow } | undefined {
  const g = gated(deps, m);
  if (!g) return {};
  const flow = stepFlowNow(flowInput(deps, g));
  return flow && { flow };
}

/** Evaluates the limits of a message's step before the claim's transaction; undefined when it has none. */
export async function flowFor(deps: GateDeps, m: StepMessage): Promise<StepFlow | undefined> {
  const g = gated(deps, m);
  if (!g) return undefined;
  const input = flowInput(deps, g);
  return stepFlowNow(input) ?? await stepFlow(input);
}

/**
 * Gates a claim that fencing let run (inside its transaction): runs on with the keys taken and the start
 * recorded, or becomes a drop whose commands park the attempt (the run is marked started all the same).
 */
export function gateStep(
  deps: GateDeps,
  decision: Extract<ClaimDecision, { kind: "run" }>,
  flow: StepFlow,
  env: TransitionEnv,
): ClaimDecision {
  const a = decision.attempt;
  if (a.started_at !== null) return decision;
  if (flow.error !== undefined) return failed(deps, decision, flow.error, env);
  const { concurrency, stepLimits } = deps.repo;
  const holder = stepHolder(a.id);
  const at = iso(env.now);
  const event = (type: string, data: Record<string, unknown>): Command => ({
    kind: "append_event",
    runId: a.run_id,
    type,
    step: a.path,
    data: { attempt: a.attempt, ...data },
    at,
  });
  const taken: Command[] = [];
  if (flow.slots.length > 0 && !stepLimits.holds(holder)) {
    const blocked = blockedKeys(flow.slots, concurrency.usage);
    const held = blocked.length === 0;
    taken.push({
      kind: "enqueue_concurrency",
      runId: holder,
      slots: flow.slots,
      priority: flow.priority,
      queuedMs: env.now,
      held,
    });
    if (!held) {
      const key = blocked[0].key;
      return parked(decision, [
        ...taken,
        { kind: "wait_for_concurrency", attemptId: a.id },
        event("step_waiting_for_concurrency", {
          key,
          position: concurrency.usage(key).waiting + 1,
          priority: flow.priority,
        }),
      ]);
    }
  }
  if (flow.rate) {
    const { key, limit, periodMs } = flow.rate;
    const next = nextStartAt(stepLimits.rateTimes(key, holder), flow.rate, env.now);
    const status = next > env.now ? "reserved" : "started";
    taken.push({ kind: "record_rate", key, holder, atMs: next, status, periodMs });
    if (status === "reserved") {
      return parked(decision, [
        ...taken,
        { kind: "add_timer", runId: a.run_id, attemptId: a.id, timerKind: "retry", fireAt: next, at },
        event("step_rate_limited", { key, limit, period_ms: periodMs, until: iso(next) }),
      ]);
    }
  }
  return { ...decision, commands: [...decision.commands, ...taken] };
}

/** A drop that parks the attempt: the claim's own writes except the claim itself and its step event. */
function parked(decision: Extract<ClaimDecision, { kind: "run" }>, commands: Command[]): ClaimDecision {
  const runOnly = decision.commands.filter((c) =>
    c.kind !== "claim_attempt" && !(c.kind === "append_event" && c.step !== null)
  );
  return { kind: "drop", commands: [...runOnly, ...commands] };
}

/** A step whose key template failed fails before it starts (its retry policy applies, as for any failure). */
function failed(
  deps: GateDeps,
  decision: Extract<ClaimDecision, { kind: "run" }>,
  message: string,
  env: TransitionEnv,
): ClaimDecision {
  const a = decision.attempt;
  const state = deps.snapshot(a.run_id, a.id);
  if (!state) return { kind: "drop" };
  const error = { code: "expression_failed", message: `step ${a.step_id}'s flow-control key: ${message}` };
  return { kind: "drop", commands: failUnstarted(state, a.id, error, env) };
}
