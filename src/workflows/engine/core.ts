/** EngineCore: what the engine's parts share, and commit, which applies a transition in one transaction. */

import type { NatsConnection } from "@nats-io/transport-node";
import { setImmediate } from "node:timers";
import { ulid } from "ulid";
import { errorMessage, StationError } from "../../errors.ts";
import { Watchers } from "../../lib/watchers.ts";
import { log } from "../../log.ts";
import { countRunFinished } from "../../telemetry/metrics.ts";
import type { State, WorkflowDefinition } from "../definition/schema.ts";
import type { Outcome, Scope } from "../steps/types.ts";
import { stateOf } from "./blocks.ts";
import { claim, type ClaimDecision } from "./fencing.ts";
import { type Clock, systemClock } from "../../lib/clock.ts";
import type { Command } from "./commands.ts";
import { applyOutput } from "./dataflow.ts";
import { DEFAULT_QUEUE, Dispatcher, type StepMessage } from "./dispatch.ts";
import { type AfterCommit, NO_EFFECTS } from "./after_commit.ts";
import { type AttemptRow, type RunRow, TERMINAL_RUN } from "./ledger.ts";
import type { Repository } from "./repository.ts";
import type { RunState, TransitionEnv } from "./run_state.ts";
import { type Slot, Slots } from "./slots.ts";
import { Admission } from "./admission.ts";
import { eagerFlow, flowFor, gateStep } from "./step_gate.ts";
import type { StepFlow } from "./step_limits.ts";
import type { Prepared } from "./transitions.ts";
import { StepGate } from "./step_sync.ts";
import type { EngineOptions, EngineStats } from "./options.ts";

/** How a commit goes: `eager` claims the steps it dispatches (`EngineCore.commit`); `slot` is freed for them first. */
export interface CommitOptions {
  eager?: boolean;
  /** The slot of the step whose outcome this records. */
  slot?: Slot;
}

type Claimed = { attempt: AttemptRow; slot: Slot };
type Written = { commands: Command[]; messages: StepMessage[]; claimed: Claimed[] };
interface Queued {
  write(): unknown;
  after(written: unknown): unknown;
  undo(): void;
  resolve(result: unknown): void;
  reject(err: unknown): void;
}

/** Eager steps a run takes in a row while pulled messages wait for a slot (`EngineCore.commit`). */
const EAGER_STREAK = 16;

/**
 * What the engine's parts (consumer, timers, control) share: the repository, the clock, this process's
 * in-flight steps, the definition cache, and the after-commit effects (watchers, run-end hooks, aborts, publishing).
 */
export class EngineCore {
  readonly repo: Repository;
  readonly nc: NatsConnection;
  readonly opts: EngineOptions;
  readonly clock: Clock;
  readonly dispatch: Dispatcher;
  readonly stats: EngineStats = { executed: 0, dropped: 0, remote: 0, eager: 0, started: 0, unsynced: 0 };
  readonly gate: StepGate; // every step execution starts through it (step_sync.ts)
  /** This process's identity in attempt claims. */
  readonly owner = ulid();
  readonly inflight = new Map<number, { run: string; abort: AbortController }>();
  /** The steps this process executes at once (`workers`): pulled messages and eager claims share them. */
  readonly slots: Slots;
  readonly admission: Admission; // admits runs waiting for concurrency keys when a run gives its keys back
  readonly #after: AfterCommit;
  #stopping = false;
  #handlers = new Set<Promise<void>>();
  #definitions = new Map<string, WorkflowDefinition>();
  /** The commits `commitSoon` writes at the next turn of the event loop. */
  #group: Queued[] = [];
  /** Eager steps in a row per run (`#claimHere`). */
  #streaks = new Map<string, number>();
  #watchers = new Watchers();
  #ended = new Set<string>();
  #endHooks = new Set<(runId: string) => void>();

  constructor(repo: Repository, nc: NatsConnection, opts: EngineOptions, after: AfterCommit = NO_EFFECTS) {
    [this.repo, this.#after, this.nc, this.opts] = [repo, after, nc, opts];
    this.clock = opts.clock ?? systemClock;
    this.dispatch = new Dispatcher(nc);
    this.slots = new Slots(opts.workers);
    this.admission = new Admission({ repo, snapshot: (id) => this.snapshot(id), env: () => this.env() });
    this.gate = new StepGate(this.stats, opts.ledger, opts.stepDurability);
  }

  /** Whether the engine is stopping: nothing new is claimed, fired or offered. */
  get stopping(): boolean {
    return this.#stopping;
  }
  /** Marks the engine stopping (Engine.stop); there is no way back. */
  stop(): void {
    this.#stopping = true;
  }

  /** What a transition may know now: the clock's reading, this process and the settings. */
  env(): TransitionEnv {
    return {
      now: this.clock.now(),
      owner: this.owner,
      leaseMs: this.opts.leaseMs,
      defaultTimeoutMs: this.opts.defaultTimeoutMs,
      random: Math.random,
    };
  }

  /**
   * Runs `decide` and applies its commands in one transaction, then the in-process effects of what committed.
   * Returns the step messages to publish. With `eager`, the same transaction claims the dispatched steps of the
   * default queue for this station while it has free slots (eager dispatch: no message, no second transaction),
   * and they start running once it committed; should this process die, their claims lapse and recovery
   * dispatches them again, as for any claimed step.
   */
  commit(decide: () => Command[], opts: CommitOptions = {}): StepMessage[] {
    const claimed: Claimed[] = [];
    let written: Written;
    try {
      written = this.repo.transaction(() => this.#write(decide, opts, claimed));
    } catch (err) {
      for (const { slot } of claimed) slot.free();
      throw err;
    }
    return this.#effects(written);
  }

  /**
   * `commit` in a group: every commit asked for in this turn of the event loop is written at the next
   * (setImmediate, microseconds later) in one transaction, each in its own savepoint (one that throws
   * rolls back alone), so outcomes that arrive together share one BEGIN/COMMIT and their pages.
   */
  commitSoon(decide: () => Command[], opts: CommitOptions = {}): Promise<StepMessage[]> {
    const claimed: Claimed[] = [];
    return this.#inGroup(
      () => this.#write(decide, opts, claimed),
      (written) => this.#effects(written),
      () => claimed.forEach(({ slot }) => slot.free()),
    );
  }

  /** `claimStep` in the next group transaction (`commitSoon`), its step's limits evaluated first. */
  async claimSoon(m: StepMessage): Promise<ClaimDecision> {
    const flow = await flowFor(this, m);
    return this.#inGroup(() => this.claimIn(m, this.owner, flow), (decision) => decision);
  }

  #inGroup<W, R>(write: () => W, after: (w: W) => R, undo: () => void = () => {}): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.#group.length === 0) setImmediate(() => this.#flush());
      this.#group.push({ write, after, undo, resolve, reject } as Queued);
    });
  }

  #flush(): void {
    const group = this.#group;
    this.#group = [];
    const results: ({ written: unknown } | { error: unknown })[] = [];
    try {
      this.repo.transaction(() => {
        for (const q of group) {
          try {
            results.push({ written: this.repo.transaction(q.write) });
          } catch (error) {
            q.undo();
            results.push({ error });
          }
        }
      });
    } catch (error) {
      for (const q of group) q.undo(), q.reject(error);
      return;
    }
    group.forEach((q, i) => {
      const r = results[i];
      if ("error" in r) return q.reject(r.error);
      try {
        q.resolve(q.after(r.written));
      } catch (err) {
        q.reject(err);
      }
    });
  }

  /** The writing half of a commit (inside its transaction). */
  #write(decide: () => Command[], opts: CommitOptions, claimed: Claimed[]): Written {
    // Freed here, with no await before the claims below, so the first step it dispatches can take it.
    opts.slot?.free();
    const commands = decide();
    const freed: string[] = [];
    const messages = this.repo.apply(commands, freed);
    this.admission.admit(freed, { commands, messages });
    return {
      commands,
      messages: opts.eager ? messages.filter((m) => !this.#claimHere(m, claimed)) : messages,
      claimed,
    };
  }

  /** The in-process effects of what committed; returns the step messages to publish. */
  #effects({ commands, messages, claimed }: Written): StepMessage[] {
    for (const c of commands) {
      if (c.kind === "cancel_attempt") {
        const local = this.inflight.get(c.attemptId);
        if (local) queueMicrotask(() => local.abort.abort(new StationError("canceled", "step canceled")));
      } else if (c.kind === "add_timer") {
        queueMicrotask(() => this.#after.armTimers());
      } else if (c.kind === "request_wait") {
        queueMicrotask(() => this.#after.waitStarted(c.runId, c.attemptId));
      } else if (c.kind === "acquire_concurrency") {
        this.#watchers.notify(c.runId); // an admitted run's followers (its own commit notifies the others)
      } else if (c.kind === "reopen_run") {
        this.#definitions.delete(c.runId); // a retried run goes on with the definition it was given
      } else if (c.kind === "finish_run") {
        this.#ended.add(c.runId);
        this.#definitions.delete(c.runId);
        this.#streaks.delete(c.runId);
      }
    }
    for (const { attempt, slot } of claimed) this.#after.runHere(attempt, slot);
    return messages;
  }

  /**
   * Claims a just-dispatched step for this station inside the transaction, if a slot is free; true when
   * claimed. While pulled messages wait for a slot, a run goes back through the queue after EAGER_STREAK
   * eager steps in a row, so a long run cannot keep a slot from the runs queued behind it.
   */
  #claimHere(m: StepMessage, claimed: Claimed[]): boolean {
    if (!this.#after.runsHere() || this.stopping || this.queueOf(m.id) !== DEFAULT_QUEUE) return false;
    const gate = eagerFlow(this, m); // undefined: its limits need JSONata, evaluated before a claim's transaction
    if (!gate) return false;
    const streak = this.#streaks.get(m.run) ?? 0;
    const slot = streak < EAGER_STREAK || this.slots.waiting === 0 ? this.slots.tryTake() : undefined;
    const decision = slot && this.claimIn(m, this.owner, gate.flow);
    if (decision?.kind !== "run") {
      slot?.free();
      this.#streaks.delete(m.run);
      return decision?.kind === "drop" && decision.commands !== undefined; // parked by its limits: no message
    }
    this.#streaks.set(m.run, streak + 1);
    this.stats.eager++;
    claimed.push({ attempt: decision.attempt, slot: slot! });
    return true;
  }

  /**
   * Fencing inside the caller's transaction: whether `m` may run its attempt, claimed for owner when it may;
   * `flow` (its step's limits, from `flowFor`) may park it instead (step_gate.ts).
   */
  claimIn(m: StepMessage, owner: string = this.owner, flow?: StepFlow): ClaimDecision {
    const a = this.repo.attempts.get(m.id);
    const env = { ...this.env(), owner };
    const decision = claim({
      message: m,
      attempt: a,
      run: a && this.repo.runs.head(a.run_id),
      inflight: a !== undefined && this.inflight.has(a.id),
      retryPending: a?.status === "scheduled" && this.repo.timers.retryPending(a.id),
    }, env);
    const gated = flow && decision.kind === "run" ? gateStep(this, decision, flow, env) : decision;
    if (gated.kind !== "busy" && gated.commands) this.repo.apply(gated.commands);
    return gated;
  }

  /** A run as transitions read it, with the attempts a transition is about (call inside a transaction). */
  snapshot(runId: string, ...include: number[]): RunState | undefined {
    return this.repo.snapshots.read(runId, (id) => this.definition(id), include);
  }

  /** The definition a run started with (cached while the run is active here). */
  definition(runId: string): WorkflowDefinition {
    return this.#definitions.get(runId) ?? this.definitionOf(this.repo.runs.get(runId)!);
  }

  /** The definition of a run row, through the cache. */
  definitionOf(run: RunRow): WorkflowDefinition {
    const def = this.#definitions.get(run.id) ?? JSON.parse(run.definition) as WorkflowDefinition;
    this.#definitions.set(run.id, def);
    return def;
  }

  /** The state an attempt runs, read from the ledger. */
  stateOf(a: AttemptRow): State {
    return stateOf(this.definition(a.run_id), a, {
      scope: (s) => this.repo.scopes.get(a.run_id, s),
      attempt: (id) => this.repo.attempts.get(id),
    });
  }

  /** The scope's data context. */
  scope(runId: string, scope: string): Scope {
    return JSON.parse(this.repo.scopes.get(runId, scope)!.context) as Scope;
  }
  /** The async part of recording an outcome (expressions in `output` mappings), done before the transaction. */
  async prepare(attempt: AttemptRow, state: State, outcome: Outcome): Promise<Prepared> {
    if (outcome.kind !== "completed") return { outcome, state };
    const scope = this.scope(attempt.run_id, attempt.scope);
    try {
      return { outcome, state, context: await applyOutput(scope, state, outcome.output) };
    } catch (err) {
      return {
        state,
        outcome: { kind: "failed", error: { code: "output_mapping_error", message: errorMessage(err) } },
      };
    }
  }

  /** Keeps a background task until it ends, logging its failure; `stop` waits for them. */
  track(p: Promise<void>): Promise<void> {
    const tracked = p.catch((err) => log.error("engine task failed", { error: errorMessage(err) }))
      .finally(() => this.#handlers.delete(tracked));
    this.#handlers.add(tracked);
    return tracked;
  }

  /** Tracked tasks and group commits not yet settled (quiescence in tests: `idle.ts`). */
  get pending(): number {
    return this.#handlers.size + this.#group.length;
  }

  /** Settles when every tracked task has. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.#handlers]);
  }
  /** Publishes step messages (after their transaction committed), each on its step's task queue. */
  async publishAll(messages: StepMessage[], traceparent: string | null): Promise<void> {
    await Promise.all(messages.map((m) => this.dispatch.publish(m, traceparent, this.queueOf(m.id))));
  }

  /** The task queue an attempt's step runs on: its own `queue`, else the workflow's `defaults.queue`. */
  queueOf(attemptId: number): string {
    const a = this.repo.attempts.get(attemptId);
    if (!a) return DEFAULT_QUEUE;
    return this.stateOf(a).queue ?? this.definition(a.run_id).defaults?.queue ?? DEFAULT_QUEUE;
  }

  /** Tells watchers the run's events changed, and run-end hooks when it just ended. */
  notify(runId: string): void {
    this.#watchers.notify(runId);
    // Only after the commit that ended it (a rolled-back transaction leaves the run active).
    const run = this.#ended.delete(runId) ? this.repo.runs.head(runId)! : undefined;
    if (run && TERMINAL_RUN.includes(run.status)) {
      countRunFinished(run.workflow_id, run.status);
      for (const fn of this.#endHooks) {
        try {
          fn(runId);
        } catch (err) {
          log.warn("run-end hook failed", { run_id: runId, error: errorMessage(err) });
        }
      }
    }
  }

  /** Calls fn whenever events are appended to the run (in this process). Returns the unsubscribe. */
  watch(runId: string, fn: () => void): () => void {
    return this.#watchers.watch(runId, fn);
  }

  /** Calls fn with the run id after a run ends in this process. Returns the unsubscribe. */
  onRunEnd(fn: (runId: string) => void): () => void {
    this.#endHooks.add(fn);
    return () => this.#endHooks.delete(fn);
  }

  /** Aborts this process's in-flight steps of a run. */
  abortRun(runId: string): void {
    for (const { run, abort } of this.inflight.values()) {
      if (run === runId) abort.abort(new StationError("canceled", "run canceled"));
    }
  }
}
