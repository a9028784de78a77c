/** Run control: start, cancel, pause, resume, and approval decisions, each one transition. */

import { ulid } from "ulid";
import { StationError } from "../../errors.ts";
import { countRunStarted } from "../../telemetry/metrics.ts";
import { currentTraceparent, inSpan } from "../../telemetry/tracing.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";
import type { EngineCore } from "./core.ts";
import { newTraceparent } from "./dispatch.ts";
import { cancelRun, decideApproval, decisionOutcome, pauseRun, resumeRun } from "./fencing.ts";
import { checkInput } from "../json_schema.ts";
import type { ApprovalRow, RunRow } from "./ledger.ts";
import type { RunState } from "./run_state.ts";
import { createRun } from "./transitions.ts";
import { runAdmission } from "./admission.ts";
import type { RunTrigger } from "../trigger.ts";
import type { DebouncedStart } from "./debounce.ts";

/** How a run is started. */
export interface StartRunRequest {
  definition: WorkflowDefinition;
  workflowVersion?: number | null;
  input: Record<string, unknown>;
  traceparent?: string | null;
  /** What started the run (`workflow.trigger` in its context); the API and the scheduler always say. */
  trigger?: RunTrigger;
  /**
   * Called inside the transaction that would create run `runId`: the id of a run to answer instead,
   * creating nothing (an idempotent start whose key already started one), or undefined to go on.
   */
  claim?: (runId: string) => string | undefined;
  /** Overrides the workflow's `priority` (0–9) when concurrency slots are scarce. */
  priority?: number;
}

/** The subject prefix on which a cancel reaches every engine process (`<prefix>.<run id>`). */
export const CANCEL_SUBJECT = "stn.engine.cancel";

/** Run control: start, cancel, pause, resume, and approval decisions. */
export class Control {
  #core: EngineCore;

  constructor(core: EngineCore) {
    this.#core = core;
  }

  /**
   * Creates a run and dispatches its first step. With tracing on, the run's span (a child of the request
   * that started it) is what the run stores: every step attempt, on any process and after restarts, is its child.
   */
  startRun(req: StartRunRequest): Promise<RunRow> {
    return this.#span(req, async (id) => (await this.#start(id, req))!);
  }

  /**
   * Starts the run of a debounced start whose window ended, taking it in the creating transaction (so it
   * starts once); undefined when it was taken already. A singleton `skip` records the active run.
   */
  startDebounced(s: DebouncedStart, take: (runId: string) => boolean): Promise<RunRow | undefined> {
    return this.#span(s, (id) => this.#start(id, s, take));
  }

  #span<T>(req: { definition: WorkflowDefinition }, start: (id: string) => Promise<T>): Promise<T> {
    const id = ulid();
    const attributes = { "stn.run.id": id, "stn.workflow.id": req.definition.id };
    return inSpan(`workflow.run ${req.definition.id}`, attributes, () => start(id));
  }

  async #start(
    id: string,
    req: StartRunRequest,
    take?: (runId: string) => boolean,
  ): Promise<RunRow | undefined> {
    const core = this.#core;
    const def = req.definition;
    const input = checkInput(def, req.input);
    const traceparent = currentTraceparent() ?? newTraceparent(req.traceparent);
    const admission = await runAdmission(def, input, req.priority);
    let existing: string | undefined;
    let canceled: string[] = [];
    const messages = await core.commitSoon(() => {
      existing = req.claim?.(id);
      if (existing) return [];
      const single = core.admission.singleton(admission);
      if (take && !take(single.active ?? id)) return [];
      existing = single.active;
      if (existing) return [];
      canceled = single.canceled;
      return [
        ...single.commands,
        ...createRun(
          {
            id,
            definition: def,
            workflowVersion: req.workflowVersion ?? null,
            input,
            traceparent,
            trigger: req.trigger,
            concurrency: admission && {
              ...admission,
              singleton: single.slot,
              usage: (key) => core.repo.concurrency.usage(key, core.clock.now()),
            },
          },
          core.env(),
        ),
      ];
    }, { eager: true });
    for (const runId of canceled) core.notify(runId), core.nc.publish(`${CANCEL_SUBJECT}.${runId}`);
    if (existing) return core.repo.runs.get(existing)!;
    if (!core.repo.runs.head(id)) return undefined; // a debounced start taken by someone else
    core.notify(id);
    countRunStarted(def.id);
    await core.publishAll(messages, traceparent);
    return core.repo.runs.get(id)!;
  }

  /** Cancels a run: in-flight executors are aborted, approvals and timers canceled, nothing runs after. */
  cancel(runId: string, reason = "canceled by request"): RunRow {
    const core = this.#core;
    // What it gave back may admit waiting runs and steps: their first messages go out (the sweep is the fallback).
    const admitted = core.commit(() => cancelRun(this.#require(runId), reason, core.env()));
    if (admitted.length > 0) void core.track(core.publishAll(admitted, null));
    core.notify(runId);
    core.abortRun(runId);
    core.nc.publish(`${CANCEL_SUBJECT}.${runId}`);
    return core.repo.runs.get(runId)!;
  }

  /** Pauses a run: the running step finishes, nothing new starts until resume. */
  pause(runId: string): RunRow {
    const core = this.#core;
    core.commit(() => pauseRun(this.#require(runId).run, core.env()));
    core.notify(runId);
    return core.repo.runs.get(runId)!;
  }

  /** Resumes a paused run exactly where it stopped. */
  async resume(runId: string): Promise<RunRow> {
    const core = this.#core;
    const messages = await core.commitSoon(() => {
      const state = this.#require(runId);
      // Attempts waiting out a retry backoff are published by their timer.
      const retryWaiting = new Set(
        [...state.attempts.values()]
          .filter((a) => a.status === "scheduled" && core.repo.timers.retryPending(a.id))
          .map((a) => a.id),
      );
      return resumeRun(state, retryWaiting, core.env());
    });
    core.notify(runId);
    const run = core.repo.runs.get(runId)!;
    await core.publishAll(messages, run.traceparent);
    return run;
  }

  /** Records an approval decision and continues the run; a second decision is a 409. */
  async decide(approvalId: string, approved: boolean, actor: string, comment?: string): Promise<ApprovalRow> {
    const core = this.#core;
    const approval = core.repo.approvals.get(approvalId);
    if (!approval) {
      throw new StationError("approval_not_found", `no approval ${approvalId}`, {
        status: 404,
        hint: "list them with `stn workflow approvals list`",
      });
    }
    if (approval.status !== "pending") {
      throw new StationError("approval_decided", `approval ${approvalId} is already ${approval.status}`, {
        status: 409,
        details: { status: approval.status, decided_by: approval.decided_by },
      });
    }
    const attempt = core.repo.attempts.get(approval.attempt_id)!;
    const state = core.stateOf(attempt);
    const { decision, outcome } = decisionOutcome(state, { approved, actor, comment }, core.clock.now());
    const prepared = await core.prepare(attempt, state, outcome);
    let traceparent: string | null = null;
    const messages = await core.commitSoon(() => {
      const run = core.snapshot(attempt.run_id, attempt.id)!;
      traceparent = run.run.traceparent;
      const approval = core.repo.approvals.get(approvalId)!;
      return decideApproval(run, { approval, decision, prepared }, core.env());
    });
    core.notify(attempt.run_id);
    await core.publishAll(messages, traceparent);
    return core.repo.approvals.get(approvalId)!;
  }

  #require(runId: string): RunState {
    const state = this.#core.snapshot(runId);
    if (!state) {
      throw new StationError("run_not_found", `no workflow run ${runId}`, {
        status: 404,
        hint: "list runs with `stn workflow runs`",
      });
    }
    return state;
  }
}
