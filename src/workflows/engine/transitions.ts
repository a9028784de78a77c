import type { Block, State, WorkflowDefinition } from "../definition/schema.ts";
import type { Outcome, Scope } from "../steps/types.ts";
import { backoff, blockOf, permanentError, retryPolicy, timeoutOf } from "./blocks.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import { blockStart, findState, initialContext } from "./dataflow.ts";
import { addTimer, park } from "./parking.ts";
import type { RunTrigger } from "../trigger.ts";
import { enqueueRun, type NewRunConcurrency } from "./concurrency.ts";
import { releaseStep } from "./step_limits.ts";
import { outputProblem } from "../json_schema.ts";
import {
  type AttemptRow,
  type FanoutMeta,
  type RunRow,
  type RunStatus,
  type StepError,
  TERMINAL_RUN,
} from "./ledger.ts";
import { ACTIVE_ATTEMPT, childScopes, type RunState, Transition, type TransitionEnv } from "./run_state.ts";

/**
 * The engine's rules as pure functions (docs/design/ledger-and-engine.md#transitions-are-pure): given a run's
 * state, an outcome and the time, decide what changes, as a list of commands. No SQL, no NATS, no timers
 * here; `EngineCore.commit` (core.ts) reads the state, calls these, and `apply.ts` writes the commands in one
 * transaction.
 */

/** An outcome ready to record: the state that produced it and, for a completed step, the scope after its data flow. */
export interface Prepared {
  outcome: Outcome;
  state: State;
  /** The scope after a completed step's data flow. */
  context?: Scope;
}

/** What starting a run needs. */
export interface NewRun {
  id: string;
  definition: WorkflowDefinition;
  workflowVersion: number | null;
  /** The input with the inputSchema's defaults applied. */
  input: Record<string, unknown>;
  traceparent: string;
  /** What started the run (`workflow.trigger`). */
  trigger?: RunTrigger;
  /** The run's concurrency keys (evaluated), its priority, and how busy each key is now. */
  concurrency?: NewRunConcurrency;
}

/** Creates a run and schedules its first step. */
export function createRun(req: NewRun, env: TransitionEnv): Command[] {
  const t = newRun(req, env, { context: initialContext(req.input, req.id, req.definition.id, req.trigger) });
  if (req.concurrency && !enqueueRun(t, req.concurrency)) return t.commands;
  dispatch(t, schedule(t, "", blockStart(req.definition as Block), { attempt: 1 }));
  return t.commands;
}

/** A transition that creates a run (its row, top-level scope and `run_created` event) and nothing else yet. */
export function newRun(
  req: NewRun,
  env: TransitionEnv,
  extra: { context: Scope; parent?: { runId: string; step: string } },
): Transition {
  const at = iso(env.now);
  const run: RunRow = {
    id: req.id,
    workflow_id: req.definition.id,
    workflow_version: req.workflowVersion,
    definition: "",
    status: "pending",
    input: "",
    result: null,
    error: null,
    traceparent: req.traceparent,
    created_at: at,
    updated_at: at,
    started_at: null,
    completed_at: null,
  };
  const t = new Transition({
    run,
    definition: req.definition,
    attempts: new Map(),
    scopes: new Map([["", {
      run_id: req.id,
      scope: "",
      parent_attempt: null,
      key: "",
      position: 0,
      status: "running",
    }]]),
    lastVisit: () => 0,
  }, env);
  t.emit({
    kind: "create_run",
    runId: req.id,
    definition: req.definition,
    workflowVersion: req.workflowVersion,
    input: req.input,
    traceparent: req.traceparent,
    context: extra.context,
    ...(extra.parent ? { parent: extra.parent } : {}),
    at,
  });
  t.event("run_created", null, { workflow_id: req.definition.id, input: req.input });
  return t;
}

/** Admits a run that waited for concurrency: it holds its keys and its first step is scheduled. */
export function admitRun(state: RunState, env: TransitionEnv): Command[] {
  const t = new Transition(state, env);
  const run = state.run;
  t.emit({ kind: "acquire_concurrency", runId: run.id });
  if (run.status === "waiting_for_concurrency") {
    t.emit({ kind: "set_run_status", runId: run.id, status: "pending", at: t.at });
  }
  t.event("run_admitted", null);
  dispatch(t, schedule(t, "", blockStart(state.definition as Block), { attempt: 1 }));
  return t.commands;
}

/** What recording an outcome needs besides the run state. */
export interface SettleInput {
  attemptId: number;
  /** The status the attempt must still have (fencing): `running` for executed steps, `waiting` for waits. */
  from: "running" | "waiting";
  prepared: Prepared;
  /** The attempt's scope context (read in the transaction), for a fanout's child scopes. */
  scopeContext?: Scope;
}

/**
 * Records an outcome if the attempt is still `from` (and, when running, still ours) in an active
 * run, then advances the run. Nothing when the fence says the outcome is stale or a duplicate.
 */
export function settle(state: RunState, input: SettleInput, env: TransitionEnv): Command[] {
  const t = new Transition(state, env);
  settleIn(t, input);
  return t.commands;
}

/** `settle` within a transition that may already hold commands. */
export function settleIn(t: Transition, { attemptId, from, prepared, scopeContext }: SettleInput): void {
  const a = t.state.attempts.get(attemptId);
  const run = t.state.run;
  if (!a || a.status !== from || (from === "running" && a.owner !== t.env.owner)) return;
  if (TERMINAL_RUN.includes(run.status)) return;
  const { outcome, state } = prepared;
  if (outcome.kind === "completed" || outcome.kind === "failed") {
    t.emit({ kind: "cancel_timers", attemptId: a.id, timerKind: "step_timeout" });
  }
  switch (outcome.kind) {
    case "completed": {
      t.emit({ kind: "complete_attempt", attemptId: a.id, output: outcome.output, at: t.at });
      releaseStep(t, a);
      t.emit({ kind: "set_scope_context", runId: run.id, scope: a.scope, context: prepared.context! });
      t.event("step_completed", a.path, { attempt: a.attempt, output: outcome.output });
      const next = outcome.next !== undefined ? outcome.next : state.end ? null : state.next ?? null;
      advance(t, a, next, outcome.output);
      break;
    }
    case "failed":
      fail(t, a, state, { ...outcome.error, step: a.path });
      break;
    case "sleep":
    case "approval":
    case "await":
      park(t, a, outcome);
      break;
    case "fanout": {
      t.emit({
        kind: "wait_attempt",
        attemptId: a.id,
        fanout: { join: outcome.join, maxConcurrency: outcome.maxConcurrency },
      });
      const existing = childScopes(t.state, a.id).length;
      outcome.blocks.forEach((b, i) => {
        t.emit({
          kind: "insert_scope",
          runId: a.run_id,
          scope: `${a.path}${a.visit > 1 || a.attempt > 1 ? `#${a.visit}.${a.attempt}` : ""}/${b.key}`,
          parentAttempt: a.id,
          key: b.key,
          position: existing + i,
          context: { ...structuredClone(scopeContext!), ...b.vars },
        });
      });
      const timeoutMs = timeoutOf(t.state.definition, state, t.env.defaultTimeoutMs);
      if (existing === 0 && timeoutMs !== null) addTimer(t, a.id, "step_timeout", t.env.now + timeoutMs);
      t.event("step_fanout", a.path, {
        attempt: a.attempt,
        join: outcome.join,
        children: outcome.blocks.map((b) => b.key),
      });
      startChildren(t, a.id);
      break;
    }
  }
  refreshRunStatus(t);
}

/** Starts pending children of a fanout up to its concurrency; requeues the parent when all are done. */
function startChildren(t: Transition, parentId: number): void {
  const parent = t.state.attempts.get(parentId)!;
  const meta = JSON.parse(parent.output!) as FanoutMeta;
  const children = childScopes(t.state, parentId);
  const before = children.map((c) => c.status);
  let running = before.filter((s) => s === "running").length;
  for (const child of children) {
    if (running >= meta.maxConcurrency) break;
    if (child.status !== "pending") continue;
    t.emit({ kind: "start_scope", runId: parent.run_id, scope: child.scope });
    running++;
    const block = blockOf(t.state.definition, child.scope, t.lookup);
    dispatch(t, schedule(t, child.scope, blockStart(block), { attempt: 1 }));
  }
  if (before.every((s) => s !== "pending" && s !== "running")) {
    t.emit({ kind: "requeue_attempt", attemptId: parent.id, dispatchedAt: t.env.now });
    dispatch(t, parent);
  }
}

/** After a completed step: the next step of the same block, or the block (or run) is done. */
function advance(t: Transition, a: AttemptRow, next: string | null, output: unknown): void {
  if (next) {
    const state = findState(blockOf(t.state.definition, a.scope, t.lookup), next);
    if (!state) {
      fail(t, a, undefined, {
        code: "unknown_next_state",
        message: `step ${a.step_id} routes to "${next}", which is not a state of its block`,
        step: a.path,
      });
      return;
    }
    // Scheduled even when paused: the claim drops its message and resume publishes it again.
    dispatch(t, schedule(t, a.scope, state, { attempt: 1 }));
    return;
  }
  endScope(t, a.scope, { status: "completed", output, error: null });
}

/** How a block ended: completed with its output, or failed with its error. */
type ScopeEnd =
  | { status: "completed"; output: unknown; error: null }
  | { status: "failed"; output: null; error: StepError };

/** Ends a block: the run for the top level, else the child scope of a fanout. */
function endScope(t: Transition, scope: string, { status, output, error }: ScopeEnd): void {
  const run = t.state.run;
  if (scope === "") {
    const problem = status === "completed" ? outputProblem(t.state.definition, output) : null;
    if (problem) {
      finishRun(t, "failed", null, {
        code: "output_invalid",
        message: `result does not match outputSchema: ${problem}`,
      });
    } else finishRun(t, status, output, error);
    return;
  }
  t.emit({ kind: "end_scope", runId: run.id, scope, status, output, error });
  // A parent that is no longer waiting (timed out, canceled) is not in the snapshot's active set.
  const parent = t.state.attempts.get(t.state.scopes.get(scope)!.parent_attempt!);
  if (parent?.status !== "waiting") return;
  const meta = JSON.parse(parent.output!) as FanoutMeta;
  if (status === "failed" && meta.join !== "try") {
    // Fail fast (a try runs its catch / finally stages instead): siblings are canceled and the parent joins now.
    for (const sib of openChildren(t, parent.id)) cancelScope(t, sib);
  }
  startChildren(t, parent.id);
}

function openChildren(t: Transition, parentId: number): string[] {
  return childScopes(t.state, parentId)
    .filter((s) => s.status === "pending" || s.status === "running")
    .map((s) => s.scope);
}

/** Cancels a scope, its active attempts and everything nested in them. */
export function cancelScope(t: Transition, scope: string): void {
  t.emit({ kind: "cancel_scope", runId: t.state.run.id, scope });
  for (const a of activeAttempts(t, scope)) {
    cancelAttempt(t, a);
    for (const child of openChildren(t, a.id)) cancelScope(t, child);
  }
}

/**
 * The run's (or one scope's) unfinished attempts, in the order the ledger's status index yields
 * them (status, then id), which is the order their `step_canceled` events have always had.
 */
function activeAttempts(t: Transition, scope?: string): AttemptRow[] {
  return [...t.state.attempts.values()]
    .filter((a) => ACTIVE_ATTEMPT.includes(a.status) && (scope === undefined || a.scope === scope))
    .sort((x, y) => (x.status < y.status ? -1 : x.status > y.status ? 1 : rowOrder(x.id) - rowOrder(y.id)));
}

/** Attempts created in this transition (negative ids) come after the stored ones, in creation order. */
const rowOrder = (id: number) => (id < 0 ? 2 ** 52 - id : id);

function cancelAttempt(t: Transition, a: AttemptRow): void {
  t.emit({ kind: "cancel_attempt", attemptId: a.id, at: t.at });
  releaseStep(t, a);
  t.emit({ kind: "cancel_timers", attemptId: a.id });
  t.emit({ kind: "cancel_approval", attemptId: a.id });
  if (a.step_type === "await") t.emit({ kind: "cancel_wait", attemptId: a.id, at: t.at });
  t.event("step_canceled", a.path, { attempt: a.attempt });
}

/** A failed attempt: retried per policy (a new attempt row), else its block fails. */
export function fail(t: Transition, a: AttemptRow, state: State | undefined, error: StepError): void {
  t.emit({ kind: "fail_attempt", attemptId: a.id, error, at: t.at });
  releaseStep(t, a);
  t.event("step_failed", a.path, { attempt: a.attempt, error });
  const policy = state && retryPolicy(state, t.state.definition);
  if (
    policy && a.attempt < policy.max_attempts && !policy.non_retryable.includes(error.code) &&
    error.code !== "canceled" && !permanentError(error.code)
  ) {
    const delay = backoff(policy, a.attempt, t.env.random);
    const retry = schedule(t, a.scope, state!, { attempt: a.attempt + 1, visit: a.visit });
    addTimer(t, retry.id, "retry", t.env.now + delay);
    t.event("step_retry_scheduled", a.path, { attempt: a.attempt + 1, delay_ms: delay });
    return;
  }
  endScope(t, a.scope, { status: "failed", output: null, error });
}

/** Which try of a step an attempt is: its attempt number, and its visit (the next one unless told). */
interface Try {
  attempt: number;
  visit?: number;
}

/** Inserts a scheduled attempt (and its event); returns it under its temporary id. */
export function schedule(t: Transition, scope: string, state: State, { attempt, visit }: Try): AttemptRow {
  const path = scope === "" ? state.id : `${scope}/${state.id}`;
  let v = visit;
  if (v === undefined) {
    v = t.state.lastVisit(path) + 1;
    for (const a of t.state.attempts.values()) if (a.path === path && a.visit >= v) v = a.visit + 1;
  }
  const ref = t.nextRef();
  t.emit({
    kind: "schedule_attempt",
    ref,
    runId: t.state.run.id,
    scope,
    path,
    stepId: state.id,
    stepType: state.type,
    visit: v,
    attempt,
    dispatchedAt: t.env.now,
    at: t.at,
  });
  t.event("step_scheduled", path, { attempt, type: state.type });
  return t.state.attempts.get(ref)!;
}

/** Publishes "run this attempt now" after the commit. */
export function dispatch(t: Transition, a: AttemptRow): void {
  t.emit({ kind: "dispatch", attemptId: a.id, runId: a.run_id, path: a.path, attempt: a.attempt });
}

/** Ends a run and cancels whatever is still active in it. */
export function finishRun(t: Transition, status: RunStatus, result: unknown, error: StepError | null): void {
  for (const a of activeAttempts(t)) cancelAttempt(t, a);
  const run = t.state.run;
  t.emit({ kind: "cancel_open_scopes", runId: run.id });
  t.emit({ kind: "finish_run", runId: run.id, status, result, error, at: t.at });
  const def = t.state.definition;
  if (def.concurrency || def.singleton) t.emit({ kind: "release_concurrency", runId: run.id });
  t.event(`run_${status}`, null, status === "completed" ? { result } : { error });
}

/** Running when something runs or is queued, waiting when only waits remain (paused/terminal stay). */
export function refreshRunStatus(t: Transition): void {
  const run = t.state.run;
  if (!run.started_at || run.status === "paused" || TERMINAL_RUN.includes(run.status)) return;
  let busy = 0, waiting = 0;
  for (const a of t.state.attempts.values()) {
    if (a.status === "scheduled" || a.status === "running" || a.status === "waiting_for_concurrency") busy++;
    else if (a.status === "waiting") waiting++;
  }
  const status: RunStatus = !busy && waiting > 0 ? "waiting" : "running";
  if (status !== run.status) {
    t.emit({ kind: "set_run_status", runId: run.id, status, at: t.at });
    t.event("run_status", null, { status });
  }
}
