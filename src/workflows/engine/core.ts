import type { NatsConnection } from "@nats-io/transport-node";
import { ulid } from "ulid";
import { StationError } from "../../errors.ts";
import { Watchers } from "../../lib/watchers.ts";
import { log } from "../../log.ts";
import type { AgentService } from "../../agents/service.ts";
import { countRunFinished } from "../../telemetry/metrics.ts";
import type { SandboxService } from "../../sandbox/service.ts";
import type { State, WorkflowDefinition } from "../definition/schema.ts";
import type { Outcome, Scope } from "../steps/types.ts";
import { stateOf } from "./blocks.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Command } from "./commands.ts";
import { applyOutput } from "./dataflow.ts";
import { DEFAULT_QUEUE, Dispatcher, type StepMessage } from "./dispatch.ts";
import { type AttemptRow, type RunRow, TERMINAL_RUN } from "./ledger.ts";
import type { Repository } from "./repository.ts";
import type { RunState, TransitionEnv } from "./run_state.ts";
import type { Prepared } from "./transitions.ts";

/** Engine settings (config section `engine`). */
export interface EngineOptions {
  /** Steps this process executes at once (0: none, remote `stn worker` processes run them all). */
  workers: number;
  /** Copies of the WORKFLOWS stream in a NATS cluster (default: 3 on a cluster, else 1). */
  replicas?: number;
  ackWaitMs: number;
  maxDeliver: number;
  leaseMs: number;
  defaultTimeoutMs: number;
  /** Handed to executors of `sandbox` steps. */
  sandbox?: SandboxService;
  /** Handed to executors of `agent` steps. */
  agents?: AgentService;
  /** Where every time decision reads the time (default: the wall clock). */
  clock?: Clock;
  /** How long a sent event's id is remembered (idempotency) and the event listed (default 7 days). */
  eventRetentionMs?: number;
}

/** Counters for tests and benchmarks. */
export interface EngineStats {
  executed: number;
  dropped: number;
  /** Outcomes recorded for remote workers. */
  remote: number;
}

/**
 * What the engine's parts (consumer, timers, control) share: the repository, the clock, this
 * process's in-flight steps, the definition cache, and the after-commit effects (watchers, run-end
 * hooks, aborts, publishing).
 */
export class EngineCore {
  readonly repo: Repository;
  readonly nc: NatsConnection;
  readonly opts: EngineOptions;
  readonly clock: Clock;
  readonly dispatch: Dispatcher;
  readonly stats: EngineStats = { executed: 0, dropped: 0, remote: 0 };
  /** This process's identity in attempt claims. */
  readonly owner = ulid();
  readonly inflight = new Map<number, { run: string; abort: AbortController }>();
  stopping = false;
  /** Re-arms the in-process timer (set by the timers part). */
  armTimers: () => void = () => {};
  /** Offers kept signals to a wait that just started (set by the signals part). */
  waitStarted: (runId: string, attemptId: number) => void = () => {};
  #handlers = new Set<Promise<void>>();
  #definitions = new Map<string, WorkflowDefinition>();
  #watchers = new Watchers();
  #ended = new Set<string>();
  #endHooks = new Set<(runId: string) => void>();

  constructor(repo: Repository, nc: NatsConnection, opts: EngineOptions) {
    this.repo = repo;
    this.nc = nc;
    this.opts = opts;
    this.clock = opts.clock ?? systemClock;
    this.dispatch = new Dispatcher(nc);
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
   * Runs `decide` and applies its commands in one transaction, then the in-process effects of
   * what committed. Returns the step messages to publish.
   */
  commit(decide: () => Command[]): StepMessage[] {
    const { commands, messages } = this.repo.transaction(() => {
      const commands = decide();
      return { commands, messages: this.repo.apply(commands) };
    });
    for (const c of commands) {
      if (c.kind === "cancel_attempt") {
        const local = this.inflight.get(c.attemptId);
        if (local) queueMicrotask(() => local.abort.abort(new StationError("canceled", "step canceled")));
      } else if (c.kind === "add_timer") {
        queueMicrotask(() => this.armTimers());
      } else if (c.kind === "request_wait") {
        queueMicrotask(() => this.waitStarted(c.runId, c.attemptId));
      } else if (c.kind === "finish_run") {
        this.#ended.add(c.runId);
        this.#definitions.delete(c.runId);
      }
    }
    return messages;
  }

  /** A run as transitions read it, with the attempts a transition is about (call inside a transaction). */
  snapshot(runId: string, ...include: number[]): RunState | undefined {
    return this.repo.snapshot(runId, (run) => this.definitionOf(run), include);
  }

  /** The definition a run started with (cached while the run is active here). */
  definition(runId: string): WorkflowDefinition {
    return this.#definitions.get(runId) ?? this.definitionOf(this.repo.runs.get(runId)!);
  }

  /** The definition of a run row, through the cache. */
  definitionOf(run: RunRow): WorkflowDefinition {
    let def = this.#definitions.get(run.id);
    if (!def) {
      def = JSON.parse(run.definition) as WorkflowDefinition;
      this.#definitions.set(run.id, def);
    }
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
        outcome: { kind: "failed", error: { code: "output_mapping_error", message: (err as Error).message } },
      };
    }
  }

  /** Keeps a background task until it ends, logging its failure; `stop` waits for them. */
  track(p: Promise<void>): Promise<void> {
    const tracked = p.catch((err) => log.error("engine task failed", { error: (err as Error).message }))
      .finally(() => this.#handlers.delete(tracked));
    this.#handlers.add(tracked);
    return tracked;
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
    const run = this.#ended.delete(runId) ? this.repo.runs.get(runId)! : undefined;
    if (run && TERMINAL_RUN.includes(run.status)) {
      countRunFinished(run.workflow_id, run.status);
      for (const fn of this.#endHooks) {
        try {
          fn(runId);
        } catch (err) {
          log.warn("run-end hook failed", { run_id: runId, error: (err as Error).message });
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
