import { StationError } from "../../errors.ts";
import type { State } from "../definition/schema.ts";
import { stepType } from "../steps/registry.ts";
import type { Outcome } from "../steps/types.ts";
import { stateOf, timeoutOf } from "./blocks.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import type { StepMessage } from "./dispatch.ts";
import {
  type ApprovalRow,
  type AttemptRow,
  type RunHead,
  type StepError,
  TERMINAL_RUN,
  type TimerRow,
} from "./ledger.ts";
import { childScopes, type RunState, Transition, type TransitionEnv } from "./run_state.ts";
import {
  cancelScope,
  dispatch,
  fail,
  finishRun,
  type Prepared,
  refreshRunStatus,
  settleIn,
} from "./transitions.ts";

/**
 * The guarded transitions, as pure functions: whether a step message may run its attempt, what a
 * due timer does, and the run controls (cancel, pause, resume, decide). Each gets what the ledger
 * holds inside the transaction and returns commands (or throws the 404/409 a caller sees).
 */

/** What the claim of a step message reads. */
export interface ClaimInput {
  message: StepMessage;
  attempt: AttemptRow | undefined;
  run: RunHead | undefined;
  /** This process is already executing the attempt. */
  inflight: boolean;
  /** The attempt waits out a retry backoff (its timer publishes it). */
  retryPending: boolean;
}

/**
 * Whether a message runs its attempt now, is dropped (stale, duplicate, run not active; or parked by its step's
 * limits, with the `commands` that park it), or comes back later.
 */
export type ClaimDecision =
  | { kind: "run"; attempt: AttemptRow; commands: Command[] }
  | { kind: "drop"; commands?: Command[] }
  | { kind: "busy"; retryMs: number };

/** Fencing: a message runs only the attempt the ledger still expects, of an active run, claimed by nobody alive. */
export function claim(input: ClaimInput, env: TransitionEnv): ClaimDecision {
  const { message: m, attempt: a, run } = input;
  if (!a || !run || a.run_id !== m.run || a.path !== m.path || a.attempt !== m.attempt) {
    return { kind: "drop" };
  }
  if (TERMINAL_RUN.includes(run.status) || run.status === "paused") return { kind: "drop" };
  const at = iso(env.now);
  const commands: Command[] = [];
  const event = (type: string, step: string | null, data?: unknown) =>
    commands.push({ kind: "append_event", runId: run.id, type, step, data, at });
  if (a.status === "running") {
    if (input.inflight) return { kind: "drop" };
    // Claimed by a worker that may be alive: come back when its lease would have lapsed.
    const left = (a.lease_until ?? 0) - env.now;
    if (left > 0) return { kind: "busy", retryMs: left + 50 };
    event("step_reclaimed", a.path, { attempt: a.attempt, previous_owner: a.owner });
  } else if (a.status !== "scheduled" || input.retryPending) {
    return { kind: "drop" };
  }
  commands.push({
    kind: "claim_attempt",
    attemptId: a.id,
    owner: env.owner,
    leaseUntil: env.now + env.leaseMs,
    at,
  });
  if (run.status === "pending") {
    commands.push({ kind: "mark_run_started", runId: run.id, at });
    event("run_started", null);
  }
  // `owner`: the process that runs it (this station, or a `stn worker` by its id in `stn workers`).
  event("step_started", a.path, { attempt: a.attempt, type: a.step_type, owner: env.owner });
  // The run now has a running attempt, so it is running (what refreshRunStatus would conclude).
  if (run.status !== "running") {
    commands.push({ kind: "set_run_status", runId: run.id, status: "running", at });
    event("run_status", null, { status: "running" });
  }
  return { kind: "run", attempt: { ...a, status: "running" }, commands };
}

function runFinished(run: RunHead): StationError {
  return new StationError("run_finished", `run ${run.id} already ${run.status}`, { status: 409 });
}

/** Cancels a run: whatever is active is canceled; a finished run is a 409. */
export function cancelRun(state: RunState, reason: string, env: TransitionEnv): Command[] {
  if (TERMINAL_RUN.includes(state.run.status)) throw runFinished(state.run);
  const t = new Transition(state, env);
  finishRun(t, "canceled", null, { code: "canceled", message: reason });
  return t.commands;
}

/** Pauses a run (nothing when it already is); a finished run is a 409. */
export function pauseRun(run: RunHead, env: TransitionEnv): Command[] {
  if (run.status === "paused") return [];
  if (TERMINAL_RUN.includes(run.status)) throw runFinished(run);
  const at = iso(env.now);
  return [
    { kind: "set_run_status", runId: run.id, status: "paused", at },
    { kind: "append_event", runId: run.id, type: "run_paused", step: null, at },
  ];
}

/**
 * Resumes a paused run exactly where it stopped: its scheduled attempts are dispatched again,
 * except those waiting out a retry backoff (`retryWaiting`; their timer publishes them).
 */
export function resumeRun(state: RunState, retryWaiting: ReadonlySet<number>, env: TransitionEnv): Command[] {
  const run = state.run;
  if (run.status !== "paused") {
    throw new StationError("run_not_paused", `run ${run.id} is ${run.status}, not paused`, { status: 409 });
  }
  const t = new Transition(state, env);
  // Paused before its concurrency keys admitted it (admission schedules its first step): it waits on.
  const queued = state.definition.concurrency && !run.started_at && state.attempts.size === 0;
  t.emit({
    kind: "set_run_status",
    runId: run.id,
    status: queued ? "waiting_for_concurrency" : "running",
    at: t.at,
  });
  t.event("run_resumed", null);
  refreshRunStatus(t);
  for (const a of state.attempts.values()) {
    if (a.status === "scheduled" && !retryWaiting.has(a.id)) dispatch(t, a);
  }
  return t.commands;
}

/** A human decision on an approval step, and the outcome it gives the step. */
export interface Decision {
  approved: boolean;
  actor: string;
  comment?: string;
}

/** The decision as recorded (the step's output) and the outcome its step type gives the approval step. */
export function decisionOutcome(state: State, d: Decision, now: number) {
  const approval = stepType(state.type)?.approval;
  if (!approval) throw new Error("approval attached to a non-approval step");
  const decision = {
    approved: d.approved,
    decided_by: d.actor,
    comment: d.comment ?? null,
    decided_at: iso(now),
  };
  return { decision, outcome: approval.decided(state, decision) };
}

/** A decision on an approval: the approval, what was decided, and its step's outcome prepared to commit. */
export interface DecidedApproval {
  approval: ApprovalRow;
  decision: ReturnType<typeof decisionOutcome>["decision"];
  prepared: Prepared;
}

/** Records a decision on a pending approval and continues its step; a decided one is a 409. */
export function decideApproval(
  state: RunState,
  { approval, decision, prepared }: DecidedApproval,
  env: TransitionEnv,
): Command[] {
  if (approval.status !== "pending") {
    throw new StationError("approval_decided", `approval ${approval.id} is already ${approval.status}`, {
      status: 409,
    });
  }
  const t = new Transition(state, env);
  t.emit({
    kind: "decide_approval",
    approvalId: approval.id,
    status: decision.approved ? "approved" : "rejected",
    decidedBy: decision.decided_by,
    comment: decision.comment,
    at: decision.decided_at,
  });
  t.emit({ kind: "cancel_timers", attemptId: approval.attempt_id });
  const a = state.attempts.get(approval.attempt_id)!;
  t.event("approval_decided", a.path, { approval_id: approval.id, ...decision });
  settleIn(t, { attemptId: a.id, from: "waiting", prepared });
  return t.commands;
}

/**
 * The outcome a due `timer`, `approval_timeout` or `wait_timeout` timer gives its step (to run through the data
 * flow before its transaction); undefined for the other kinds, and for an approval timeout on a
 * step whose type has no approval.
 */
export function timerOutcome(timer: TimerRow, state: State, now: number): Outcome | undefined {
  if (timer.kind === "timer") {
    return { kind: "completed", output: { fired_at: iso(now), scheduled_for: iso(timer.fire_at) } };
  }
  if (timer.kind === "wait_timeout") return stepType(state.type)?.wait?.timedOut(state, iso(now));
  const approval = stepType(state.type)?.approval;
  if (timer.kind !== "approval_timeout" || !approval) return undefined;
  return approval.timedOut(state, {
    approved: false,
    timed_out: true,
    decided_by: null,
    comment: null,
    decided_at: iso(now),
  });
}

/** What firing a timer reads besides the run state. */
export interface FireInput {
  /** The timer as the ledger holds it now: only a pending one fires (the fence between processes). */
  timer: TimerRow;
  /** The attempt still has a pending approval (for `approval_timeout`). */
  approvalPending: boolean;
  /** The attempt still has a pending wait for an event (for `wait_timeout`). */
  waitPending?: boolean;
  /** The step's outcome, from `timerOutcome` (for `timer`, `approval_timeout` and `wait_timeout`). */
  prepared?: Prepared;
}

/** Fires one due timer exactly once: a step timeout fails its fanout, a retry dispatches, a wait completes. */
export function fireTimer(state: RunState, input: FireInput, env: TransitionEnv): Command[] {
  const { timer } = input;
  if (timer.status !== "pending") return [];
  const t = new Transition(state, env);
  t.emit({ kind: "fire_timer", timerId: timer.id });
  const run = state.run;
  const a = state.attempts.get(timer.attempt_id)!;
  const active = !TERMINAL_RUN.includes(run.status);
  switch (timer.kind) {
    case "step_timeout": {
      if (a.status !== "waiting" || !active) break;
      for (const child of childScopes(state, a.id)) {
        if (child.status === "pending" || child.status === "running") cancelScope(t, child.scope);
      }
      const step = stateOf(state.definition, a, t.lookup);
      const ms = timeoutOf(state.definition, step, env.defaultTimeoutMs);
      fail(t, a, step, {
        code: "step_timeout",
        message: `step exceeded its timeout of ${ms}ms`,
        step: a.path,
      });
      refreshRunStatus(t);
      break;
    }
    case "retry":
      if (a.status === "scheduled" && run.status !== "paused" && active) dispatch(t, a);
      break;
    case "approval_timeout":
      if (!input.approvalPending) break;
      t.emit({ kind: "time_out_approval", attemptId: a.id, at: t.at });
      t.event("approval_timed_out", a.path, {});
      settleIn(t, { attemptId: a.id, from: "waiting", prepared: input.prepared! });
      break;
    case "wait_timeout":
      if (!input.waitPending) break;
      t.emit({ kind: "end_wait", attemptId: a.id, status: "timed_out", eventId: null, at: t.at });
      t.event("wait_timed_out", a.path, {});
      settleIn(t, { attemptId: a.id, from: "waiting", prepared: input.prepared! });
      break;
    case "timer":
      t.event("timer_fired", a.path, {});
      settleIn(t, { attemptId: a.id, from: "waiting", prepared: input.prepared! });
      break;
  }
  return t.commands;
}

/** Fails a scheduled attempt before it starts (its step's flow-control key could not be evaluated). */
export function failUnstarted(
  state: RunState,
  attemptId: number,
  error: StepError,
  env: TransitionEnv,
): Command[] {
  const a = state.attempts.get(attemptId);
  if (!a || a.status !== "scheduled" || TERMINAL_RUN.includes(state.run.status)) return [];
  const t = new Transition(state, env);
  fail(t, a, stateOf(state.definition, a, t.lookup), { ...error, step: a.path });
  refreshRunStatus(t);
  return t.commands;
}

/**
 * A scheduled step whose task queue had no live worker for its whole timeout fails with `no_worker`
 * (its retry policy and the run's catch apply, as for any failure); nothing when it is no longer waiting.
 */
export function expireUnserved(
  state: RunState,
  input: { attemptId: number; queue: string; timeoutMs: number },
  env: TransitionEnv,
): Command[] {
  const a = state.attempts.get(input.attemptId);
  if (!a || a.status !== "scheduled" || TERMINAL_RUN.includes(state.run.status)) return [];
  if (state.run.status === "paused") return [];
  const t = new Transition(state, env);
  fail(t, a, stateOf(state.definition, a, t.lookup), {
    code: "no_worker",
    message: `no worker served queue ${input.queue} within the step's timeout of ${input.timeoutMs}ms`,
    step: a.path,
  });
  refreshRunStatus(t);
  return t.commands;
}
