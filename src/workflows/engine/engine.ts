/**
 * Engine: the durable workflow engine, composed of the consumer, timers, controls, signals and remote
 * workers.
 */

import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Database } from "../../db/database.ts";
import { StationError } from "../../errors.ts";
import { Consumer } from "./consumer.ts";
import type { Clock } from "../../lib/clock.ts";
import { CANCEL_SUBJECT, Control, type StartRunRequest } from "./control.ts";
import { EngineCore } from "./core.ts";
import type { EngineOptions, EngineStats } from "./options.ts";
import { defaultReplicas, provisionQueue, provisionStream, type QueueInfo, queueInfo } from "./dispatch.ts";
import { Idleness } from "./idle.ts";
import type { ApprovalRow, AttemptRow, RunRow } from "./ledger.ts";
import { RemoteWorkers, type WorkerView } from "./remote.ts";
import type { StepRef } from "./remote_protocol.ts";
import { Repository } from "./repository.ts";
import { type ForkOptions, Reruns, type WithDefinition } from "./reruns.ts";
import type { Scope } from "../steps/types.ts";
import {
  type SendEventRequest,
  type SendEventResult,
  type SignalRequest,
  type SignalResult,
  Signals,
} from "./signals.ts";
import { Timers } from "./timers.ts";

export type {
  EngineOptions,
  EngineStats,
  ForkOptions,
  SendEventRequest,
  SendEventResult,
  SignalRequest,
  SignalResult,
  StartRunRequest,
  WithDefinition,
  WorkerView,
};

/** The ledger reads the engine offers its callers (API routes, event streams): typed, read-only. */
export type LedgerReads = Pick<
  Repository,
  | "runs"
  | "attempts"
  | "scopes"
  | "events"
  | "approvals"
  | "timers"
  | "waits"
  | "signals"
  | "eventLog"
  | "concurrency"
  | "stepLimits"
>;

/**
 * The durable workflow engine (docs/design/ledger-and-engine.md). Every transition is one SQLite transaction
 * that also appends the run's events; JetStream messages only say "run attempt N now", and a message is
 * executed only if the ledger still expects exactly that attempt of an active run. The rules live in
 * `transitions.ts` / `fencing.ts` (pure), the SQL in `repository.ts`; this class composes the consumer, the
 * timers and the run controls.
 */
export class Engine {
  /** Typed reads of the ledger. */
  readonly reads: LedgerReads;
  #core: EngineCore;
  #consumer: Consumer;
  #timers: Timers;
  #control: Control;
  #reruns: Reruns;
  #signals: Signals;
  #remote: RemoteWorkers;
  #idle: Idleness;
  #cancelSub?: Subscription;

  constructor(db: Database, nc: NatsConnection, options: EngineOptions) {
    const repo = new Repository(db);
    this.reads = repo;
    // What runs after a commit, besides watchers and run-end hooks: the parts made below (EngineCore#effects).
    this.#core = new EngineCore(repo, nc, options, {
      armTimers: () => this.#timers.arm(),
      waitStarted: (runId, attemptId) => this.#signals.waitStarted(runId, attemptId),
      runsHere: () => this.#consumer.pulling,
      runHere: (attempt, slot) => this.#consumer.runHere(attempt, slot),
    });
    this.#consumer = new Consumer(this.#core);
    this.#timers = new Timers(this.#core);
    this.#control = new Control(this.#core);
    this.#reruns = new Reruns(this.#core);
    this.#signals = new Signals(this.#core);
    this.#remote = new RemoteWorkers(this.#core, (a, mark) => this.#consumer.runClaimed(a, { mark }));
    this.#idle = new Idleness(db, this.#core, (a) => this.#remote.waitingFor(a));
  }

  /** The clock every time decision of this engine reads. */
  get clock(): Clock {
    return this.#core.clock;
  }

  /** Why the engine is not idle now (a step running or about to, a task or timer due), else null. */
  busy(): string | null {
    return this.#idle.busy();
  }

  /** When the engine's earliest pending timer is due (null when none is). */
  nextDue(): number | null {
    return this.#core.repo.timers.nextFireAt();
  }

  /** Counters for tests and benchmarks. */
  get stats(): EngineStats {
    return this.#core.stats;
  }

  /** Syncs of the ledger's WAL so far (`ledger.durability` fsync or step; 0 under normal). */
  get syncs(): number {
    return this.#core.gate.syncs;
  }

  /** This process's identity in attempt claims. */
  get owner(): string {
    return this.#core.owner;
  }

  /**
   * Provisions the queue, reconciles from the ledger, then starts consuming (unless remote workers
   * run every step), answering remote workers and firing timers.
   */
  async start(): Promise<void> {
    const core = this.#core;
    await provisionStream(core.nc, core.opts.replicas ?? defaultReplicas(core.nc), core.opts.queueMaxAgeMs);
    await provisionQueue(core.nc, {
      ackWaitMs: core.opts.ackWaitMs,
      maxDeliver: core.opts.maxDeliver,
      maxAckPending: Math.max(1000, core.opts.workers * 4),
    });
    this.#cancelSub = core.nc.subscribe(`${CANCEL_SUBJECT}.*`, {
      callback: (_err, msg) => core.abortRun(msg.subject.slice(CANCEL_SUBJECT.length + 1)),
    });
    if (core.opts.workers > 0) await this.#consumer.start();
    // Runs left waiting for keys nobody holds any more start now (normally the commit freeing a key admits).
    await core.publishAll(core.repo.transaction(() => core.admission.admitAll()).messages, null);
    this.#remote.start();
    await this.#timers.start();
    await this.#signals.start();
  }

  /** Stops consuming; in-flight steps get a short grace period, then their claims lapse for recovery. */
  async stop(): Promise<void> {
    const core = this.#core;
    core.stop();
    this.#timers.stop();
    this.#remote.stop();
    this.#cancelSub?.unsubscribe();
    await this.#consumer.close();
    const pending = core.settled();
    await Promise.race([pending, new Promise((r) => setTimeout(r, 2000))]);
    for (const { abort } of core.inflight.values()) {
      abort.abort(new StationError("shutdown", "station stopping"));
    }
    await Promise.race([pending, new Promise((r) => setTimeout(r, 500))]);
  }

  /** The live `stn worker` processes (those that sent a heartbeat within the lease). */
  /** Whether a `stn worker` holds the claim of exactly this step attempt (fencing its agent run's writes). */
  holds(worker: string, step: StepRef): boolean {
    return this.#remote.holds(worker, step);
  }

  workers(): WorkerView[] {
    return this.#remote.list();
  }

  /** Task queues some live process takes steps from. */
  servedQueues(): Set<string> {
    return this.#remote.served();
  }

  /** Queues with scheduled steps that no live process serves, and how many steps wait on each. */
  unserved(): { queue: string; waiting: number }[] {
    return this.#remote.unserved();
  }

  /** Why a scheduled step is not running yet when no live worker serves its queue (else null). */
  waitingFor(a: AttemptRow, served?: Set<string>): string | null {
    return this.#remote.waitingFor(a, served);
  }

  /** Calls fn whenever events are appended to the run (in this process). Returns the unsubscribe. */
  watch(runId: string, fn: () => void): () => void {
    return this.#core.watch(runId, fn);
  }

  /**
   * Calls fn with the run id after a run ends (completed, failed or canceled) in this process —
   * for per-run resources such as a run's sandbox session. Returns the unsubscribe.
   */
  onRunEnd(fn: (runId: string) => void): () => void {
    return this.#core.onRunEnd(fn);
  }

  /** The dispatch queue's depth and redeliveries (JetStream consumer info), for /metrics. */
  queueInfo(): Promise<QueueInfo> {
    return queueInfo(this.#core.nc);
  }

  /** Creates a run and dispatches its first step. */
  startRun(req: StartRunRequest): Promise<RunRow> {
    return this.#control.startRun(req);
  }

  /** Cancels a run: in-flight executors are aborted, approvals and timers canceled, nothing runs after. */
  cancel(runId: string, reason?: string): RunRow {
    return this.#control.cancel(runId, reason);
  }

  /** Pauses a run: the running step finishes, nothing new starts until resume. */
  pause(runId: string): RunRow {
    return this.#control.pause(runId);
  }

  /** Resumes a paused run exactly where it stopped. */
  resume(runId: string): Promise<RunRow> {
    return this.#control.resume(runId);
  }

  /** Continues a failed or canceled run from the step it stopped at, with the given definition (a retry). */
  retry(runId: string, opts?: WithDefinition): Promise<RunRow> {
    return this.#reruns.retry(runId, opts);
  }

  /** Starts a run linked to `parentId` that reuses its completed steps before `opts.step` (a fork). */
  fork(parentId: string, opts: ForkOptions): Promise<RunRow> {
    return this.#reruns.fork(parentId, opts);
  }

  /** The data context a step of a run saw (the run's context now without a step). */
  contextAt(runId: string, step?: string): Promise<Scope> {
    return this.#reruns.contextAt(runId, step);
  }

  /** Records an event sent to everyone: resumes the waits it matches and starts its triggered runs. */
  sendEvent(req: SendEventRequest): Promise<SendEventResult> {
    return this.#signals.send(req);
  }

  /** Sends a signal to one run: to its waiting step for that name, else kept on the run for a later wait. */
  signal(runId: string, req: SignalRequest): Promise<SignalResult> {
    return this.#signals.signal(runId, req);
  }

  /** Records an approval decision and continues the run; a second decision is a 409. */
  decide(approvalId: string, approved: boolean, actor: string, comment?: string): Promise<ApprovalRow> {
    return this.#control.decide(approvalId, approved, actor, comment);
  }
}
