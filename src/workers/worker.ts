/**
 * StepWorker: a `stn worker` pulling step messages, running them, and sending the outcomes to the station.
 */

import { hostname } from "node:os";
import { type ConsumerMessages, jetstream, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { ulid } from "ulid";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import type { SandboxService } from "../sandbox/service.ts";
import type { WorkerAgents } from "./agent_steps.ts";
import {
  CANCEL_SUBJECT,
  CLAIM_SUBJECT,
  type ClaimReply,
  consumerName,
  type Heartbeat,
  HEARTBEAT_SUBJECT,
  OUTCOME_SUBJECT,
  type OutcomeReply,
  provisionQueue,
  RELEASE_SUBJECT,
  RUN_ENDED_SUBJECT,
  type StepMessage,
  STREAM,
} from "../workflows/engine/mod.ts";
import type { State } from "../workflows/definition/schema.ts";
import { executeStep } from "../workflows/steps/execute.ts";
import type { Outcome } from "../workflows/steps/types.ts";

/** `stn worker` settings. */
export interface WorkerOptions {
  /** Shown in `stn workers` (default: host:pid). */
  name?: string;
  queues: string[];
  concurrency: number;
  ackWaitMs: number;
  maxDeliver: number;
  /** For `sandbox` steps: this machine's Docker Engine (undefined: they fail with sandbox_unavailable). */
  sandbox?: SandboxService;
  /** For `agent` steps (undefined: the station runs them). */
  agents?: WorkerAgents;
}

/** Counters for /metrics. */
export interface WorkerStats {
  executed: number;
  recorded: number;
  fenced: number;
  dropped: number;
  released: number;
}

interface InFlight {
  step: StepMessage;
  abort: AbortController;
  msg: JsMsg;
}

const REQUEST_TIMEOUT_MS = 5_000;
const STREAM_WAIT_MS = 30_000;
/** A pull request lives this long: one lost to a dying node or a consumer still forming is replaced soon. */
const PULL_EXPIRES_MS = 5_000;

/**
 * A `stn worker` (docs/design/scale-out.md): pulls step messages of its task queues from JetStream, asks the
 * station to claim each (the station is the only writer of the ledger), runs the executor here, and
 * sends the outcome back over request/reply, retrying until the station answers (outcomes are
 * idempotent). Heartbeats renew the leases of its in-flight steps; when they stop, the station lets
 * another worker reclaim them.
 */
export class StepWorker {
  readonly id = ulid();
  readonly name: string;
  readonly stats: WorkerStats = { executed: 0, recorded: 0, fenced: 0, dropped: 0, released: 0 };
  readonly inflight = new Map<number, InFlight>();
  #nc: NatsConnection;
  #opts: WorkerOptions;
  #startedAt = new Date().toISOString();
  #messages = new Map<string, ConsumerMessages>();
  #cancelSub?: Subscription;
  #runEndSub?: Subscription;
  #heartbeat?: ReturnType<typeof setTimeout>;
  #heartbeatMs = 1000;
  #draining = false;
  #active = 0;
  #wake: (() => void)[] = [];
  #tasks = new Set<Promise<void>>();

  constructor(nc: NatsConnection, opts: WorkerOptions) {
    this.#nc = nc;
    this.#opts = opts;
    this.name = opts.name ?? `${hostname()}:${Deno.pid}`;
  }

  /** The worker is draining: it takes no new step. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Provisions its queues' consumers, then pulls, at most `concurrency` steps at a time over all of them. */
  async start(): Promise<void> {
    const { ackWaitMs, maxDeliver } = this.#opts;
    for (const queue of this.#opts.queues) {
      // The station creates the stream; a worker started first waits for it (up to STREAM_WAIT_MS).
      for (const deadline = Date.now() + STREAM_WAIT_MS;;) {
        try {
          await provisionQueue(this.#nc, { ackWaitMs, maxDeliver, maxAckPending: 1000 }, queue, true);
          break;
        } catch (err) {
          const message = errorMessage(err);
          if (!/stream not found/i.test(message) || Date.now() > deadline) {
            throw new StationError("station_unreachable", `cannot open task queue ${queue}: ${message}`, {
              hint: "start `stn serve` against the same NATS (--nats-url): it creates the workflow stream",
              cause: err,
            });
          }
          log.info("waiting for a station to create the workflow stream", { queue });
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    }
    this.#cancelSub = this.#nc.subscribe(`${CANCEL_SUBJECT}.*`, {
      callback: (_err, msg) => this.#abortRun(msg.subject.slice(CANCEL_SUBJECT.length + 1)),
    });
    const sandbox = this.#opts.sandbox;
    if (sandbox) {
      // A run's sandbox here lives until the run ends (as on the station), not until the idle reaper.
      this.#runEndSub = this.#nc.subscribe(`${RUN_ENDED_SUBJECT}.*`, {
        callback: (_err, msg) =>
          void sandbox.closeRun(msg.subject.slice(RUN_ENDED_SUBJECT.length + 1)).catch((err) =>
            log.warn("closing a run's sandbox failed", { error: errorMessage(err) })
          ),
      });
    }
    await this.#beat();
    for (const queue of this.#opts.queues) void this.#pull(queue, await this.#consume(queue));
    if (this.#opts.agents) {
      this.#opts.agents.start();
      void this.#takeAgentRuns(this.#opts.agents);
    }
  }

  /**
   * Takes agent runs queued on its queues (docs/workers.md#agent-runs-on-a-queue) while it has a free slot:
   * they share its `concurrency` with its steps. It asks when told a run was queued, else every second.
   */
  async #takeAgentRuns(agents: WorkerAgents): Promise<void> {
    while (!this.#draining && !this.#nc.isClosed()) {
      if (this.#active >= this.#opts.concurrency) {
        await new Promise<void>((r) => this.#wake.push(r));
        continue;
      }
      this.#active++;
      const taken = await agents.take({ worker: this.id, name: this.name }, this.#opts.queues).catch(
        (err) => {
          log.debug("asking for a queued agent run failed", { error: errorMessage(err) });
          return undefined;
        },
      );
      if (!taken) {
        this.#free();
        await agents.nextQueued(1000);
        continue;
      }
      const task = taken.ended.finally(() => {
        this.#tasks.delete(task);
        this.#free();
      });
      this.#tasks.add(task);
    }
  }

  #free(): void {
    this.#active--;
    this.#wake.shift()?.();
  }

  async #consume(queue: string): Promise<ConsumerMessages> {
    const consumer = await jetstream(this.#nc).consumers.get(STREAM, consumerName(queue));
    const messages = await consumer.consume({
      max_messages: this.#opts.concurrency,
      expires: PULL_EXPIRES_MS,
    });
    this.#messages.set(queue, messages);
    return messages;
  }

  /**
   * Pulls a queue for as long as the worker runs. A pull can end on its own (its NATS server died, the
   * stream or consumer moved to a new leader): it is started again, so the worker never goes idle.
   */
  async #pull(queue: string, first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | undefined = first;
    while (!this.#draining && !this.#nc.isClosed()) {
      try {
        messages ??= await this.#consume(queue);
        await this.#pump(messages);
      } catch (err) {
        log.warn("pulling steps failed; pulling again", { queue, error: errorMessage(err) });
      }
      messages = undefined;
      if (!this.#draining) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * Graceful drain (SIGTERM): stops pulling, lets in-flight steps finish within `graceMs`, then
   * aborts the rest and hands them back to the station, so another worker reclaims them at once.
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    await Promise.race([
      Promise.all([...this.#messages.values()].map((m) => m.close().catch(() => {}))),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    await this.#beat();
    const settled = Promise.allSettled([...this.#tasks]);
    await Promise.race([settled, new Promise((r) => setTimeout(r, graceMs))]);
    if (this.inflight.size > 0) {
      const left = [...this.inflight.values()];
      for (const f of left) f.abort.abort(new StationError("shutdown", "worker draining"));
      const reply = await this.#request<{ released: number }>(RELEASE_SUBJECT, {
        worker: this.id,
        steps: left.map((f) => f.step),
      }).catch(() => ({ released: 0 }));
      this.stats.released += reply.released;
      for (const f of left) f.msg.nak();
    }
    await this.#opts.agents?.handBack();
    if (this.#tasks.size > 0) await Promise.race([settled, new Promise((r) => setTimeout(r, 1000))]);
    clearTimeout(this.#heartbeat);
    this.#cancelSub?.unsubscribe();
    this.#runEndSub?.unsubscribe();
  }

  async #pump(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      while (this.#active >= this.#opts.concurrency) await new Promise<void>((r) => this.#wake.push(r));
      if (this.#draining) {
        msg.nak();
        continue;
      }
      this.#active++;
      const task = this.#onMessage(msg)
        .catch((err) => log.error("worker step failed", { error: errorMessage(err) }))
        .finally(() => {
          this.#tasks.delete(task);
          this.#free();
        });
      this.#tasks.add(task);
    }
  }

  async #onMessage(msg: JsMsg): Promise<void> {
    let step: StepMessage;
    try {
      step = JSON.parse(msg.string());
    } catch {
      msg.term("undecodable step message");
      return;
    }
    if (this.inflight.has(step.id)) return; // a redelivery of what this worker runs now: its ack follows
    let claim: ClaimReply;
    try {
      claim = await this.#request<ClaimReply>(CLAIM_SUBJECT, { worker: this.id, step });
    } catch {
      msg.nak(1000); // no station answers now: the message comes back
      return;
    }
    if (claim.kind === "drop" || claim.kind === "settled") {
      if (claim.kind === "drop") this.stats.dropped++;
      msg.ack();
      return;
    }
    if (claim.kind !== "run") {
      msg.nak(claim.kind === "busy" ? claim.retryMs : 1000);
      return;
    }
    const abort = new AbortController();
    this.inflight.set(step.id, { step, abort, msg });
    const working = setInterval(() => msg.working(), Math.max(100, this.#opts.ackWaitMs / 3));
    try {
      this.stats.executed++;
      const outcome: Outcome = await executeStep(claim.state as State, claim.scope, {
        runId: step.run,
        workflowId: claim.workflowId,
        path: step.path,
        attempt: step.attempt,
        visit: claim.visit,
        signal: abort.signal,
        sandbox: this.#opts.sandbox,
        agents: this.#opts.agents?.forStep({ worker: this.id, ...step, visit: claim.visit }),
      }, claim.timeoutMs);
      if (this.#draining && abort.signal.aborted) return; // handed back in drain()
      const reply = await this.#sendOutcome(step, outcome);
      if (reply) {
        if (reply.recorded) this.stats.recorded++;
        else this.stats.fenced++;
        msg.ack();
      }
    } finally {
      clearInterval(working);
      this.inflight.delete(step.id);
    }
  }

  /** Sends an outcome until the station answers (it is idempotent); undefined when the worker gave up. */
  async #sendOutcome(step: StepMessage, outcome: Outcome): Promise<{ recorded: boolean } | undefined> {
    for (let tries = 0;; tries++) {
      try {
        const reply = await this.#request<OutcomeReply>(OUTCOME_SUBJECT, { worker: this.id, step, outcome });
        if ("recorded" in reply) return reply;
        log.warn("station refused an outcome", { run: step.run, step: step.path, error: reply.error });
        return { recorded: false };
      } catch (err) {
        // The station is away (restarting, failing over): keep the outcome while the claim may still hold.
        if (this.#nc.isClosed() || tries >= 30) {
          log.warn("outcome not delivered; the step will be reclaimed", { run: step.run, step: step.path });
          return undefined;
        }
        log.debug("outcome not answered yet", { error: errorMessage(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Sends a heartbeat (renewing in-flight leases) and schedules the next at lease/3. */
  async #beat(): Promise<void> {
    clearTimeout(this.#heartbeat);
    const hb: Heartbeat = {
      worker: this.id,
      name: this.name,
      host: hostname(),
      pid: Deno.pid,
      queues: this.#opts.queues,
      concurrency: this.#opts.concurrency,
      started_at: this.#startedAt,
      steps: [...this.inflight.values()].map((f) => f.step),
      draining: this.#draining,
      agents: this.#opts.agents !== undefined,
    };
    try {
      const reply = await this.#request<{ leaseMs?: number }>(HEARTBEAT_SUBJECT, hb);
      if (reply.leaseMs) this.#heartbeatMs = Math.max(100, Math.floor(reply.leaseMs / 3));
      this.#opts.agents?.renew();
    } catch (err) {
      log.debug("heartbeat not answered", { error: errorMessage(err) });
    }
    if (!this.#nc.isClosed()) this.#heartbeat = setTimeout(() => void this.#beat(), this.#heartbeatMs);
  }

  async #request<T>(subject: string, body: unknown): Promise<T> {
    const reply = await this.#nc.request(subject, JSON.stringify(body), { timeout: REQUEST_TIMEOUT_MS });
    return reply.json<T>();
  }

  #abortRun(runId: string): void {
    for (const f of this.inflight.values()) {
      if (f.step.run === runId) f.abort.abort(new StationError("canceled", "run canceled"));
    }
  }
}
