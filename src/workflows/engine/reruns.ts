/** Retry and fork (the I/O around repair.ts's transitions), and the data context a step of a run saw. */

import { ulid } from "ulid";
import { StationError } from "../../errors.ts";
import { countRunStarted } from "../../telemetry/metrics.ts";
import type { Block, WorkflowDefinition } from "../definition/schema.ts";
import { checkInput } from "../json_schema.ts";
import type { Scope } from "../steps/types.ts";
import type { RunTrigger } from "../trigger.ts";
import type { EngineCore } from "./core.ts";
import { findState, initialContext, replayContext } from "./dataflow.ts";
import { newTraceparent } from "./dispatch.ts";
import type { AttemptRow, RunRow } from "./ledger.ts";
import { forkRun, retryRun } from "./repair.ts";
import { type RunAdmission, runAdmission } from "./admission.ts";
import type { KeySlot } from "../../lib/concurrency.ts";
import type { NewRunConcurrency } from "./concurrency.ts";
import { CANCEL_SUBJECT } from "./control.ts";

/** The definition a retry or fork goes on with (the run's own when not given), and its stored version. */
export interface WithDefinition {
  definition?: WorkflowDefinition;
  workflowVersion?: number | null;
}

/** How to fork: the step to resume at (a nested path means its top-level block), and a new input if any. */
export interface ForkOptions extends WithDefinition {
  step: string;
  input?: Record<string, unknown>;
}

/** Retries and forks of runs, and the contexts `stn workflow eval` evaluates against. */
export class Reruns {
  #core: EngineCore;

  constructor(core: EngineCore) {
    this.#core = core;
  }

  /** Continues a failed or canceled run from the top-level step it stopped at (`run_retried`). */
  async retry(runId: string, opts: WithDefinition = {}): Promise<RunRow> {
    const core = this.#core;
    const run = this.#require(runId);
    const definition = opts.definition ?? core.definitionOf(run);
    const workflowVersion = opts.definition ? opts.workflowVersion ?? null : run.workflow_version;
    const admission = await runAdmission(definition, JSON.parse(run.input));
    let canceled: string[] = [];
    const messages = await core.commitSoon(() => {
      // Read inside the transaction: two retries of one run at once are fenced by the status check.
      const topLevel = this.#topLevel(runId);
      const state = core.snapshot(runId, ...topLevel.slice(-1).map((a) => a.id))!;
      const single = core.admission.singleton(admission);
      if (single.active && single.active !== runId) throw singletonActive(runId, single.active);
      canceled = single.canceled;
      const concurrency = this.#concurrency(admission, single.slot);
      return [
        ...single.commands,
        ...retryRun(state, { definition, workflowVersion, topLevel, concurrency }, core.env()),
      ];
    }, { eager: true });
    this.#canceled(canceled);
    core.notify(runId);
    const after = core.repo.runs.get(runId)!;
    await core.publishAll(messages, after.traceparent);
    return after;
  }

  /** A new run, linked to its parent, whose steps before `opts.step` reuse the parent's recorded outputs. */
  async fork(parentId: string, opts: ForkOptions): Promise<RunRow> {
    const core = this.#core;
    const parent = this.#require(parentId);
    const definition = opts.definition ?? core.definitionOf(parent);
    const workflowVersion = opts.definition ? opts.workflowVersion ?? null : parent.workflow_version;
    const step = opts.step.split("/")[0];
    const topLevel = this.#topLevel(parentId);
    const cut = topLevel.findIndex((a) => a.step_id === step);
    if (cut < 0) throw notReached(parentId, opts.step);
    const reused = topLevel.slice(0, cut).filter((a) => a.status === "completed");
    const input = checkInput(definition, opts.input ?? JSON.parse(parent.input));
    const id = ulid();
    const trigger: RunTrigger = { type: "fork", parent_run_id: parentId, step };
    const context = await replayContext(
      initialContext(input, id, definition.id, trigger),
      reused.flatMap((a) => {
        const state = findState(definition as Block, a.step_id);
        // A step the definition lacks is refused by forkRun with the reason.
        return state ? [{ state, output: JSON.parse(a.output ?? "null") }] : [];
      }),
    );
    const traceparent = newTraceparent(null);
    const admission = await runAdmission(definition, input);
    let active: string | undefined;
    let canceled: string[] = [];
    const messages = await core.commitSoon(() => {
      // A fork is a start: a singleton `skip` answers the active run, as a start does.
      const single = core.admission.singleton(admission);
      active = single.active;
      if (active) return [];
      canceled = single.canceled;
      const concurrency = this.#concurrency(admission, single.slot);
      const request = { id, definition, workflowVersion, input, traceparent, trigger, concurrency };
      return [
        ...single.commands,
        ...forkRun({ ...request, parentRunId: parentId, step, reused, context }, core.env()),
      ];
    }, { eager: true });
    if (active) return core.repo.runs.get(active)!;
    this.#canceled(canceled);
    core.notify(id);
    countRunStarted(definition.id);
    await core.publishAll(messages, traceparent);
    return core.repo.runs.get(id)!;
  }

  /**
   * The data context a step saw: for a top-level step, its run's context replayed up to the step's first
   * visit; for a step inside a block, its block's recorded context; without a step, the run's context now.
   */
  async contextAt(runId: string, step?: string): Promise<Scope> {
    const core = this.#core;
    const run = this.#require(runId);
    const now = core.scope(runId, "");
    if (step === undefined) return now;
    const attempts = core.repo.attempts.list(runId);
    const first = attempts.find((a) => a.path === step || a.step_id === step);
    if (!first) throw notReached(runId, step);
    if (first.scope !== "") return core.scope(runId, first.scope);
    const definition = core.definitionOf(run);
    const before = attempts.filter((a) => a.scope === "" && a.id < first.id && a.status === "completed");
    const workflow = now.workflow as { trigger?: RunTrigger } | undefined;
    return await replayContext(
      initialContext(JSON.parse(run.input), run.id, run.workflow_id, workflow?.trigger),
      before.flatMap((a) => {
        const state = findState(definition as Block, a.step_id);
        return state ? [{ state, output: JSON.parse(a.output ?? "null") }] : [];
      }),
    );
  }

  /** A rerun's keys as a start takes them (the ledger's usage now), or undefined without flow control. */
  #concurrency(
    admission: RunAdmission | undefined,
    singleton: KeySlot | undefined,
  ): NewRunConcurrency | undefined {
    const core = this.#core;
    return admission && {
      ...admission,
      singleton,
      usage: (key) => core.repo.concurrency.usage(key, core.clock.now()),
    };
  }

  /** Stops the runs a singleton `cancel_previous` canceled, wherever their steps run. */
  #canceled(runIds: string[]): void {
    for (const runId of runIds) this.#core.notify(runId), this.#core.nc.publish(`${CANCEL_SUBJECT}.${runId}`);
  }

  #topLevel(runId: string): AttemptRow[] {
    return this.#core.repo.attempts.list(runId).filter((a) => a.scope === "");
  }

  #require(runId: string): RunRow {
    const run = this.#core.repo.runs.get(runId);
    if (!run) {
      throw new StationError("run_not_found", `no workflow run ${runId}`, {
        status: 404,
        hint: "list runs with `stn workflow runs`",
      });
    }
    return run;
  }
}

function singletonActive(runId: string, active: string): StationError {
  return new StationError("singleton_active", `run ${active} holds the singleton key run ${runId} needs`, {
    status: 409,
    hint: `retry it once ${active} has ended, or cancel that one: stn workflow cancel ${active}`,
  });
}

function notReached(runId: string, step: string): StationError {
  return new StationError("step_not_in_run", `run ${runId} has no attempt of step ${step}`, {
    status: 404,
    hint: `its steps: stn workflow inspect ${runId}`,
  });
}
