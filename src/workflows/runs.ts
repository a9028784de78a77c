/**
 * WorkflowRuns: reading workflow runs as the API shows them, for the routes and the dashboard alike (MCP
 * reaches them through the API). The engine writes; this is the one place that reads its ledger for them.
 */

import { notFound } from "../errors.ts";
import {
  type ApprovalStatus,
  type ApprovalView,
  approvalView,
  type Engine,
  type EventQuery,
  eventView,
  type RunQuery,
  type RunRow,
  type RunView,
  runView,
  signalView,
  type StepView,
  stepView,
} from "./engine/mod.ts";

/** A step as the API lists it: with why it waits, when no live process serves its queue. */
export type ListedStep = StepView & { waiting_for?: string };

/** The read side of workflow runs. */
export class WorkflowRuns {
  #engine: Engine;

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  /** A run's ledger row, or undefined. */
  get(runId: string): RunRow | undefined {
    return this.#engine.reads.runs.get(runId);
  }

  /** A run's ledger row, or a 404 that says how to list runs. */
  require(runId: string): RunRow {
    const run = this.get(runId);
    if (!run) throw notFound("run", runId, "list runs with `stn workflow runs`");
    return run;
  }

  /** Why a run waits for concurrency: the first key it waits for and its place there (1 = next); else undefined. */
  waitingFor(run: RunRow): { key: string; position: number } | undefined {
    return run.status === "waiting_for_concurrency"
      ? this.#engine.reads.concurrency.position(run.id)
      : undefined;
  }

  /** A page of runs, newest first. */
  list(q: RunQuery): { runs: RunView[]; nextCursor: string | null } {
    const page = this.#engine.reads.runs.list(q);
    return { runs: page.runs.map(runView), nextCursor: page.nextCursor };
  }

  /** A run's steps; with `waitingFor`, each scheduled step that no live process serves says why. */
  steps(runId: string, opts: { waitingFor?: boolean } = {}): ListedStep[] {
    const attempts = this.#engine.reads.attempts.list(runId);
    if (!opts.waitingFor) return attempts.map(stepView);
    const served = this.#engine.servedQueues();
    return attempts.map((a) => {
      const why = this.#engine.waitingFor(a, served);
      return why ? { ...stepView(a), waiting_for: why } : stepView(a);
    });
  }

  /** Approvals, of one run and/or in one status. */
  approvals(q: { runId?: string; status?: ApprovalStatus } = {}): ApprovalView[] {
    return this.#engine.reads.approvals.list(q).map(approvalView);
  }

  /** One approval, or undefined. */
  approval(id: string): ApprovalView | undefined {
    const row = this.#engine.reads.approvals.get(id);
    return row && approvalView(row);
  }

  /** The sequence number of a run's last event (0 when it has none). */
  lastSeq(runId: string): number {
    return this.#engine.reads.events.lastSeq(runId);
  }

  /** A page of the events sent to the station, newest first. */
  events(q: EventQuery): { events: ReturnType<typeof eventView>[]; nextCursor: string | null } {
    const page = this.#engine.reads.eventLog.list(q);
    return { events: page.events.map(eventView), nextCursor: page.nextCursor };
  }

  /** The signals sent to a run, each with the step that took it (null while it is kept). */
  signals(runId: string): ReturnType<typeof signalView>[] {
    const reads = this.#engine.reads;
    return reads.signals.list(runId).map((s) =>
      signalView(s, s.consumed_by === null ? null : reads.attempts.get(s.consumed_by)?.path ?? null)
    );
  }
}
