/**
 * Retries and forks as pure transitions (docs/workflows.md#retry-fork-and-re-run): a retry reopens a run that
 * ended failed or canceled and schedules again the top-level step it stopped at, with the (fixed) definition;
 * a fork creates a run whose steps before the fork point are copies of its parent's completed ones. Both are
 * one command list, applied in one transaction like every other transition.
 */

import { StationError } from "../../errors.ts";
import type { Block, WorkflowDefinition } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import type { Command } from "./commands.ts";
import { findState } from "./dataflow.ts";
import type { AttemptRow, RunStatus } from "./ledger.ts";
import { type RunState, Transition, type TransitionEnv } from "./run_state.ts";
import { dispatch, type NewRun, newRun, schedule } from "./transitions.ts";
import { enqueueRun, type NewRunConcurrency } from "./concurrency.ts";

/** The run statuses a retry takes a run from. */
export const RETRYABLE: readonly RunStatus[] = ["failed", "canceled"];

/** A completed top-level step a new definition must keep: its id and its type. */
export type KeptStep = Pick<AttemptRow, "step_id" | "step_type">;

/**
 * Why `def` cannot take over steps already completed (an id gone, a type changed) or resume at `resumeAt`;
 * null when it can.
 */
export function incompatibility(def: WorkflowDefinition, kept: KeptStep[], resumeAt: string): string | null {
  for (const step of kept) {
    const state = findState(def as Block, step.step_id);
    if (!state) {
      return `step ${step.step_id} completed, but the definition has no top-level step ${step.step_id}`;
    }
    if (state.type !== step.step_type) {
      return `step ${step.step_id} completed as a ${step.step_type} step, the definition makes it a ${state.type} step`;
    }
  }
  if (!findState(def as Block, resumeAt)) {
    return `the definition has no top-level step ${resumeAt} to resume at`;
  }
  return null;
}

function incompatible(message: string): StationError {
  return new StationError("definition_incompatible", message, {
    status: 422,
    hint:
      "keep the ids and types of the steps that completed; to change them, fork the run or start a new one",
  });
}

/** What a retry needs besides the run: the definition it goes on with and the run's top-level attempts. */
export interface RetryRequest {
  definition: WorkflowDefinition;
  workflowVersion: number | null;
  /** The run's top-level attempts (scope ''), oldest first. */
  topLevel: AttemptRow[];
  /** The run's concurrency and rate-limit keys, evaluated again (they were given back when it ended). */
  concurrency?: NewRunConcurrency;
}

/**
 * Reopens a failed or canceled run and schedules a new visit of the top-level step it stopped at (a
 * `foreach`/`parallel`/`try` block re-runs whole); completed steps stay completed. Throws the 409/422 the
 * caller answers when the run is not retryable or the definition does not fit.
 */
export function retryRun(state: RunState, req: RetryRequest, env: TransitionEnv): Command[] {
  const run = state.run;
  if (!RETRYABLE.includes(run.status)) {
    throw new StationError(
      "run_not_retryable",
      `run ${run.id} is ${run.status}: only a failed or canceled run is retried`,
      {
        status: 409,
        hint: run.status === "completed"
          ? `fork it to run steps again: stn workflow fork ${run.id} --from STEP`
          : "wait for it to end, or cancel it first",
      },
    );
  }
  const stoppedAt = req.topLevel.at(-1);
  if (!stoppedAt || stoppedAt.status === "completed") {
    throw new StationError(
      "run_not_retryable",
      `run ${run.id} has no step to retry: every step it ran completed`,
      {
        status: 409,
        hint:
          `its error says why it failed; fork it to run steps again: stn workflow fork ${run.id} --from STEP`,
      },
    );
  }
  const completed = req.topLevel.filter((a) => a.status === "completed");
  const problem = incompatibility(req.definition, completed, stoppedAt.step_id);
  if (problem) throw incompatible(problem);
  const t = new Transition(state, env);
  const previous = { status: run.status, error: run.error === null ? null : JSON.parse(run.error) };
  t.emit({
    kind: "reopen_run",
    runId: run.id,
    definition: req.definition,
    workflowVersion: req.workflowVersion,
    at: t.at,
  });
  t.event("run_retried", null, {
    from_step: stoppedAt.step_id,
    previous_status: previous.status,
    previous_error: previous.error,
    workflow_version: req.workflowVersion,
    reused: completed.length,
  });
  // The run gave its keys back when it ended: it takes them again as a start does, or waits for them.
  if (req.concurrency && !enqueueRun(t, req.concurrency)) return t.commands;
  const resume = findState(req.definition as Block, stoppedAt.step_id)!;
  dispatch(t, schedule(t, "", resume, { attempt: 1 }));
  return t.commands;
}

/** What a fork needs: the new run, its parent, the parent's steps it reuses, and the context they produced. */
export interface ForkRequest extends NewRun {
  parentRunId: string;
  /** The top-level step the fork resumes at. */
  step: string;
  /** The parent's completed top-level attempts before the fork point, oldest first (with their output). */
  reused: AttemptRow[];
  /** The data context after the reused steps (their data flow replayed over the fork's input). */
  context: Scope;
}

/** Creates a forked run: the reused steps inserted completed (event `step_completed` with `reused`), then STEP scheduled. */
export function forkRun(req: ForkRequest, env: TransitionEnv): Command[] {
  const problem = incompatibility(req.definition, req.reused, req.step);
  if (problem) throw incompatible(problem);
  const t = newRun(req, env, { context: req.context, parent: { runId: req.parentRunId, step: req.step } });
  t.event("run_forked", null, {
    parent_run_id: req.parentRunId,
    from_step: req.step,
    reused: req.reused.map((a) => a.path),
  });
  for (const a of req.reused) {
    const ref = t.nextRef();
    const output = JSON.parse(a.output ?? "null");
    t.emit({
      kind: "reuse_attempt",
      ref,
      runId: req.id,
      path: a.path,
      stepId: a.step_id,
      stepType: a.step_type,
      visit: a.visit,
      output,
      reusedFrom: a.id,
      at: t.at,
    });
    t.event("step_completed", a.path, {
      attempt: 1,
      output,
      reused: true,
      reused_from: { run_id: req.parentRunId, visit: a.visit, attempt: a.attempt },
    });
  }
  // Like a start, a fork takes its keys first; admitted later, it goes on at STEP (admission.ts resumeAt).
  if (req.concurrency && !enqueueRun(t, req.concurrency)) return t.commands;
  dispatch(t, schedule(t, "", findState(req.definition as Block, req.step)!, { attempt: 1 }));
  return t.commands;
}
