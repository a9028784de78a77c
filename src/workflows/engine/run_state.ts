/** A run as transitions read it (RunState), and a transition in progress (Transition). */

import type { WorkflowDefinition } from "../definition/schema.ts";
import type { BlockLookup } from "./blocks.ts";
import { iso } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import type { AttemptRow, AttemptStatus, RunHead, ScopeRow } from "./ledger.ts";

/** A scope as transitions see it: its place and status (its data context is read only where needed). */
export type ScopeState = Omit<ScopeRow, "context" | "output" | "error">;

/**
 * What a transition reads: one run as the ledger holds it inside the transaction. `attempts` are
 * the run's unfinished attempts plus the ones the transition is about (in id order), with
 * `output` kept only for waiting ones (a fan-out parent's join settings); `scopes` are all of its
 * scopes. Finished attempts matter only for their visit count, hence `lastVisit` instead of rows.
 */
export interface RunState {
  run: RunHead;
  definition: WorkflowDefinition;
  attempts: Map<number, AttemptRow>;
  scopes: Map<string, ScopeState>;
  /** The highest visit of a step path among the stored attempts (0 when none). */
  lastVisit: (path: string) => number;
}

/** What a transition may know besides the run: the time, this process, and the engine settings. */
export interface TransitionEnv {
  /** The clock's reading for this transition (ms since the epoch). */
  now: number;
  /** This process's identity in attempt claims. */
  owner: string;
  leaseMs: number;
  defaultTimeoutMs: number;
  /** Jitter for retry backoff, in [0, 1). */
  random: () => number;
}

/** Attempt statuses that still hold the run open. */
export const ACTIVE_ATTEMPT: readonly AttemptStatus[] = [
  "scheduled",
  "running",
  "waiting",
  "waiting_for_concurrency",
];

/**
 * A transition in progress: the commands decided so far, each also applied to the run state so
 * later decisions in the same transition see it (as later queries in one SQL transaction would).
 * The state given is consumed.
 */
export class Transition {
  readonly commands: Command[] = [];
  readonly state: RunState;
  readonly env: TransitionEnv;
  readonly at: string;
  #ref = 0;

  constructor(state: RunState, env: TransitionEnv) {
    this.state = state;
    this.env = env;
    this.at = iso(env.now);
  }

  /** Records a command and applies it to the state. */
  emit(cmd: Command): void {
    this.commands.push(cmd);
    evolve(this.state, cmd);
  }

  /** Appends an event to the run's log. */
  event(type: string, step: string | null, data?: unknown): void {
    this.emit({ kind: "append_event", runId: this.state.run.id, type, step, data, at: this.at });
  }

  /** A temporary id for an attempt created in this transition. */
  nextRef(): number {
    return --this.#ref;
  }

  /** Scope and attempt lookups over the state. */
  get lookup(): BlockLookup {
    return { scope: (s) => this.state.scopes.get(s), attempt: (id) => this.state.attempts.get(id) };
  }
}

/** The child scopes of a fan-out attempt, in position order. */
export function childScopes(state: RunState, parentAttempt: number): ScopeState[] {
  return [...state.scopes.values()]
    .filter((s) => s.parent_attempt === parentAttempt)
    .sort((x, y) => x.position - y.position);
}

/** Applies one command to the in-memory run state (what the repository does to the rows). */
export function evolve(state: RunState, cmd: Command): void {
  const attempt = (id: number) => state.attempts.get(id);
  switch (cmd.kind) {
    case "reopen_run":
      Object.assign(state.run, {
        status: "running",
        result: null,
        error: null,
        completed_at: null,
        updated_at: cmd.at,
        workflow_version: cmd.workflowVersion,
      });
      state.definition = cmd.definition;
      state.scopes.get("")!.status = "running";
      return;
    case "mark_run_started":
      state.run.started_at = cmd.at;
      return;
    case "set_run_status":
      state.run.status = cmd.status;
      state.run.updated_at = cmd.at;
      return;
    case "finish_run":
      Object.assign(state.run, {
        status: cmd.status,
        result: cmd.status === "completed" ? JSON.stringify(cmd.result ?? null) : null,
        error: cmd.error ? JSON.stringify(cmd.error) : null,
        updated_at: cmd.at,
        completed_at: cmd.at,
      });
      return;
    case "schedule_attempt":
      state.attempts.set(cmd.ref, {
        id: cmd.ref,
        run_id: cmd.runId,
        scope: cmd.scope,
        path: cmd.path,
        step_id: cmd.stepId,
        step_type: cmd.stepType,
        visit: cmd.visit,
        attempt: cmd.attempt,
        status: "scheduled",
        output: null,
        error: null,
        owner: null,
        lease_until: null,
        dispatched_at: cmd.dispatchedAt,
        created_at: cmd.at,
        started_at: null,
        completed_at: null,
      });
      return;
    case "reuse_attempt":
      state.attempts.set(cmd.ref, {
        id: cmd.ref,
        run_id: cmd.runId,
        scope: "",
        path: cmd.path,
        step_id: cmd.stepId,
        step_type: cmd.stepType,
        visit: cmd.visit,
        attempt: 1,
        status: "completed",
        output: JSON.stringify(cmd.output ?? null),
        error: null,
        owner: null,
        lease_until: null,
        dispatched_at: null,
        created_at: cmd.at,
        started_at: null,
        completed_at: cmd.at,
        reused_from: cmd.reusedFrom,
      });
      return;
    case "claim_attempt": {
      const a = attempt(cmd.attemptId);
      if (a) {
        Object.assign(a, { status: "running", owner: cmd.owner, lease_until: cmd.leaseUntil });
        a.started_at ??= cmd.at;
      }
      return;
    }
    case "complete_attempt":
      Object.assign(attempt(cmd.attemptId) ?? {}, {
        status: "completed",
        output: JSON.stringify(cmd.output ?? null),
        completed_at: cmd.at,
        owner: null,
      });
      return;
    case "fail_attempt":
      Object.assign(attempt(cmd.attemptId) ?? {}, {
        status: "failed",
        error: JSON.stringify(cmd.error),
        completed_at: cmd.at,
        owner: null,
      });
      return;
    case "cancel_attempt":
      Object.assign(attempt(cmd.attemptId) ?? {}, { status: "canceled", completed_at: cmd.at, owner: null });
      return;
    case "wait_attempt":
      Object.assign(attempt(cmd.attemptId) ?? {}, {
        status: "waiting",
        owner: null,
        ...(cmd.fanout ? { output: JSON.stringify(cmd.fanout) } : {}),
      });
      return;
    case "wait_for_concurrency":
      Object.assign(attempt(cmd.attemptId) ?? {}, { status: "waiting_for_concurrency", owner: null });
      return;
    case "admit_attempt": {
      const a = attempt(cmd.attemptId);
      if (a?.status === "waiting_for_concurrency") Object.assign(a, { status: "scheduled" });
      return;
    }
    case "requeue_attempt": {
      const a = attempt(cmd.attemptId);
      if (a?.status === "waiting") Object.assign(a, { status: "scheduled", dispatched_at: cmd.dispatchedAt });
      return;
    }
    case "insert_scope":
      state.scopes.set(cmd.scope, {
        run_id: cmd.runId,
        scope: cmd.scope,
        parent_attempt: cmd.parentAttempt,
        key: cmd.key,
        position: cmd.position,
        status: "pending",
      });
      return;
    case "start_scope":
    case "end_scope":
    case "cancel_scope": {
      const s = state.scopes.get(cmd.scope);
      if (s) {
        s.status = cmd.kind === "start_scope"
          ? "running"
          : cmd.kind === "end_scope"
          ? cmd.status
          : "canceled";
      }
      return;
    }
    case "cancel_open_scopes":
      for (const s of state.scopes.values()) {
        if (s.status === "pending" || s.status === "running") s.status = "canceled";
      }
      return;
    default:
      // Events, timers, approvals, contexts, leases and dispatches are not part of the run state.
      return;
  }
}
