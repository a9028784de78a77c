/**
 * WorkflowRuns: reading workflow runs as the API shows them, for the routes and the dashboard alike (MCP
 * reaches them through the API). The engine writes; this is the one place that reads its ledger for them.
 */

import { notFound } from "../errors.ts";
import {
  type ApprovalStatus,
  type ApprovalView,
  approvalView,
  type AttemptRow,
  type Engine,
  type EventQuery,
  eventView,
  type RunQuery,
  type RunRow,
  type RunView,
  runView,
  signalView,
  stepHolder,
  type StepView,
  stepView,
} from "./engine/mod.ts";

/** A pending timer of a run: the step it belongs to, what it does when it fires, and when. */
export interface PendingTimer {
  step: string;
  /** `timer` (a timer step), `approval_timeout`, `wait_timeout`, `retry`, `step_timeout`. */
  kind: string;
  fires_at: string;
}

/**
 * A step as the API lists it: with why it waits — no live process serves its queue, its concurrency keys are
 * full (`waiting_for_concurrency`: the key and its place there), or its rate limit's window is (flow control).
 */
export type ListedStep = StepView & { waiting_for?: string; waiting_for_concurrency?: KeyPlace };

/** A key a run or step waits for, and its place in that key's queue (1 = next). */
export type KeyPlace = { key: string; position: number };

/** What workflow runs' agent runs cost (USD) by run id: the agent ledger's sum (docs/agents.md#cost). */
export type RunCosts = (runIds: string[]) => Map<string, number | null>;

/** A workflow run as the API shows it, with what its agent steps cost. */
export type CostedRunView = RunView & { cost_usd: number | null };

/** The read side of workflow runs. */
export class WorkflowRuns {
  #engine: Engine;
  #costs: RunCosts;

  constructor(engine: Engine, costs: RunCosts = (ids) => new Map(ids.map((id) => [id, null]))) {
    this.#engine = engine;
    this.#costs = costs;
  }

  /** A run's API view: its row's, and what its agent steps (and their child agents) cost. */
  view(run: RunRow): CostedRunView {
    return { ...runView(run), cost_usd: this.#costs([run.id]).get(run.id) ?? null };
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

  /** The runs forked from a run, oldest first. */
  forks(runId: string): RunView[] {
    return this.#engine.reads.runs.forks(runId).map(runView);
  }

  /** Why a run waits for concurrency: the first key it waits for and its place there (1 = next); else undefined. */
  waitingFor(run: RunRow): KeyPlace | undefined {
    return run.status === "waiting_for_concurrency"
      ? this.#engine.reads.concurrency.position(run.id)
      : undefined;
  }

  /** A page of runs, newest first. */
  list(q: RunQuery): { runs: CostedRunView[]; nextCursor: string | null } {
    const page = this.#engine.reads.runs.list(q);
    const costs = this.#costs(page.runs.map((r) => r.id));
    return {
      runs: page.runs.map((r) => ({ ...runView(r), cost_usd: costs.get(r.id) ?? null })),
      nextCursor: page.nextCursor,
    };
  }

  /** A run's steps; with `waitingFor`, each scheduled step that no live process serves says why. */
  steps(runId: string, opts: { waitingFor?: boolean } = {}): ListedStep[] {
    const reads = this.#engine.reads;
    const view = (a: AttemptRow) => stepView(a, reads.attempts.get);
    const attempts = reads.attempts.list(runId);
    if (!opts.waitingFor) return attempts.map(view);
    const served = this.#engine.servedQueues();
    return attempts.map((a) => {
      const place = a.status === "waiting_for_concurrency"
        ? reads.concurrency.position(stepHolder(a.id))
        : undefined;
      if (place) {
        const why = `concurrency key ${place.key} (position ${place.position})`;
        return { ...view(a), waiting_for: why, waiting_for_concurrency: place };
      }
      const rate = a.status === "scheduled" ? reads.stepLimits.reservation(stepHolder(a.id)) : undefined;
      const why = rate
        ? `rate limit ${rate.key} until ${new Date(rate.at_ms).toISOString()}`
        : this.#engine.waitingFor(a, served);
      return why ? { ...view(a), waiting_for: why } : view(a);
    });
  }

  /** The run's timers that have yet to fire, earliest first, each with its step's path. */
  pendingTimers(runId: string): PendingTimer[] {
    const reads = this.#engine.reads;
    return reads.timers.list({ runId, status: "pending" })
      .sort((a, b) => a.fire_at - b.fire_at)
      .map((t) => ({
        step: reads.attempts.get(t.attempt_id)?.path ?? "?",
        kind: t.kind,
        fires_at: new Date(t.fire_at).toISOString(),
      }));
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
