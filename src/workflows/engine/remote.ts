/** RemoteWorkers: the station's side of `stn worker` processes, with the same fencing as local steps. */

import type { Msg, Subscription } from "@nats-io/transport-node";
import { log } from "../../log.ts";
import type { Outcome } from "../steps/types.ts";
import { stepType } from "../steps/registry.ts";
import { timeoutOf } from "./blocks.ts";
import { claimStep, joinedChildren, recordOutcome } from "./claims.ts";
import type { EngineCore } from "./core.ts";
import { DEFAULT_QUEUE } from "./dispatch.ts";
import { expireUnserved } from "./fencing.ts";
import { flowFor } from "./step_gate.ts";
import type { AttemptRow } from "./ledger.ts";
import {
  CLAIM_SUBJECT,
  type ClaimReply,
  ClaimRequest,
  Heartbeat,
  HEARTBEAT_SUBJECT,
  OUTCOME_SUBJECT,
  type OutcomeReply,
  OutcomeRequest,
  RELEASE_SUBJECT,
  ReleaseRequest,
  RUN_ENDED_SUBJECT,
  type StepRef,
} from "./remote_protocol.ts";
import { errorMessage } from "../../errors.ts";

/** A live `stn worker` as `GET /api/v1/workers` lists it. */
export interface WorkerView {
  id: string;
  name: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  draining: boolean;
  /** Whether it runs `agent` steps. */
  agents: boolean;
  in_flight: { run_id: string; path: string; attempt: number }[];
  started_at: string;
  last_heartbeat: string;
}

/**
 * The station's side of remote workers (docs/design/scale-out.md#one-writer-many-runners): answers claims,
 * outcomes, heartbeats and hand-backs over NATS, with the same fencing and leases as the local consumer
 * (`claims.ts`), and fails steps whose task queue has no live worker for their whole timeout.
 */
export class RemoteWorkers {
  #core: EngineCore;
  #subs: Subscription[] = [];
  #seen = new Map<string, { hb: Heartbeat; at: number }>();
  #expiry?: ReturnType<typeof setInterval>;
  #offRunEnd?: () => void;
  #startedAt = 0;
  /** Runs an attempt the station has claimed for itself (the local consumer's path). */
  #runHere: (attempt: AttemptRow, mark: number) => Promise<boolean>;

  constructor(core: EngineCore, runHere: (attempt: AttemptRow, mark: number) => Promise<boolean>) {
    this.#core = core;
    this.#runHere = runHere;
  }

  /** Starts answering workers and watching for unserved queues. */
  start(): void {
    const nc = this.#core.nc;
    const serve = <T>(subject: string, handle: (body: unknown) => T | Promise<T>) =>
      this.#subs.push(nc.subscribe(subject, {
        callback: (_err, msg) => void this.#core.track(this.#answer(msg, handle)),
      }));
    serve(CLAIM_SUBJECT, (b) => this.#claim(ClaimRequest.parse(b)));
    serve(OUTCOME_SUBJECT, (b) => this.#outcome(OutcomeRequest.parse(b)));
    serve(HEARTBEAT_SUBJECT, (b) => this.#heartbeat(Heartbeat.parse(b)));
    serve(RELEASE_SUBJECT, (b) => this.#release(ReleaseRequest.parse(b)));
    this.#offRunEnd = this.#core.onRunEnd((runId) => nc.publish(`${RUN_ENDED_SUBJECT}.${runId}`));
    this.#startedAt = this.#core.clock.now();
    const every = Math.max(250, Math.min(1000, this.#core.opts.leaseMs / 2));
    this.#expiry = setInterval(() => void this.#core.track(this.#expireUnserved()), every);
  }

  /** Stops answering (workers retry their requests until a station answers again). */
  stop(): void {
    clearInterval(this.#expiry);
    this.#offRunEnd?.();
    for (const s of this.#subs) s.unsubscribe();
    this.#subs = [];
  }

  /** The workers that sent a heartbeat within the lease. */
  list(): WorkerView[] {
    const cutoff = this.#core.clock.now() - this.#core.opts.leaseMs;
    const out: WorkerView[] = [];
    for (const [id, { hb, at }] of this.#seen) {
      if (at < cutoff) {
        this.#seen.delete(id);
        continue;
      }
      out.push({
        id,
        name: hb.name,
        host: hb.host,
        pid: hb.pid,
        queues: hb.queues,
        concurrency: hb.concurrency,
        draining: hb.draining,
        agents: hb.agents,
        in_flight: hb.steps.map((s) => ({ run_id: s.run, path: s.path, attempt: s.attempt })),
        started_at: hb.started_at,
        last_heartbeat: new Date(at).toISOString(),
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** Task queues some live process takes steps from (`default` too when this station runs steps itself). */
  served(): Set<string> {
    const queues = new Set(this.list().filter((w) => !w.draining).flatMap((w) => w.queues));
    if (this.#core.opts.workers > 0 && !this.#core.stopping) queues.add(DEFAULT_QUEUE);
    return queues;
  }

  /** Why a scheduled step is not running yet, when no live worker serves its queue (else null). */
  waitingFor(a: AttemptRow, served: Set<string> = this.served()): string | null {
    if (a.status !== "scheduled") return null;
    const queue = this.#core.queueOf(a.id);
    return served.has(queue) ? null : `waiting for a worker on queue ${queue}`;
  }

  /** Queues with scheduled steps that no live process serves, and how many steps wait on each. */
  unserved(): { queue: string; waiting: number }[] {
    const core = this.#core;
    const served = this.served();
    const waiting = new Map<string, number>();
    for (const a of core.repo.attempts.lost(core.clock.now(), 0)) {
      if (a.status !== "scheduled") continue;
      const queue = core.queueOf(a.id);
      if (!served.has(queue)) waiting.set(queue, (waiting.get(queue) ?? 0) + 1);
    }
    return [...waiting].map(([queue, n]) => ({ queue, waiting: n }));
  }

  async #answer<T>(msg: Msg, handle: (body: unknown) => T | Promise<T>): Promise<void> {
    let reply: unknown;
    try {
      reply = await handle(msg.json());
    } catch (err) {
      log.warn("worker request refused", { subject: msg.subject, error: errorMessage(err) });
      reply = { kind: "error", error: errorMessage(err), message: errorMessage(err) };
    }
    if (msg.reply) msg.respond(JSON.stringify(reply ?? {}));
  }

  async #claim(req: ClaimRequest): Promise<ClaimReply> {
    const core = this.#core;
    if (core.stopping) return { kind: "busy", retryMs: 1000 };
    // A station-only step is claimed and run by the station itself, whatever queue it came from; the worker
    // just acks its message.
    const known = core.repo.attempts.get(req.step.id);
    const here = known !== undefined && this.#stationOnly(known, req.worker);
    const flow = await flowFor(core, req.step);
    const decision = claimStep(core, req.step, here ? core.owner : req.worker, flow);
    if (decision.kind === "drop") {
      if (decision.commands) core.notify(req.step.run); // parked by its step's limits
      core.stats.dropped++;
      return { kind: "drop" };
    }
    if (decision.kind === "busy") return decision;
    const attempt = decision.attempt;
    core.notify(attempt.run_id);
    const mark = core.gate.mark();
    if (here) {
      void core.track(core.gate.ready().then(() => this.#runHere(attempt, mark)).then(() => {}));
      return { kind: "settled" };
    }
    const state = core.stateOf(attempt);
    const joined = joinedChildren(core, attempt, state);
    if (joined) {
      await recordOutcome(core, { attempt, state, outcome: joined, owner: req.worker });
      return { kind: "settled" };
    }
    const def = core.definition(attempt.run_id);
    // The worker starts the step on this answer: under `ledger.durability: step`, only once its claim is synced.
    await core.gate.ready();
    core.gate.started(mark);
    return {
      kind: "run",
      state,
      scope: core.scope(attempt.run_id, attempt.scope),
      workflowId: def.id,
      visit: attempt.visit,
      timeoutMs: timeoutOf(def, state, core.opts.defaultTimeoutMs) ?? core.opts.defaultTimeoutMs,
      leaseMs: core.opts.leaseMs,
    };
  }

  /**
   * Whether a step must run on the station: a type that needs it always; an `agent` step unless the worker
   * runs agents and the agent runner lets it (no child agents, no test doubles).
   */
  #stationOnly(a: AttemptRow, worker: string): boolean {
    const state = this.#core.stateOf(a);
    const station = stepType(state.type)?.station;
    if (station !== "unless_agent_worker") return station === true;
    const agents = this.#core.opts.agents;
    const { agent } = state as { agent: string };
    const [name, environment] = agent.split("@");
    return !this.#seen.get(worker)?.hb.agents || !agents?.stationOnly ||
      agents.stationOnly(name, environment ?? "", a.run_id);
  }

  /** Whether a worker holds the claim of exactly this step attempt (agent steps' writes are fenced by it). */
  holds(worker: string, step: StepRef): boolean {
    const a = this.#core.repo.attempts.get(step.id);
    return a !== undefined && a.run_id === step.run && a.path === step.path && a.attempt === step.attempt &&
      a.status === "running" && a.owner === worker;
  }

  async #outcome(req: OutcomeRequest): Promise<OutcomeReply> {
    const core = this.#core;
    const { step, worker } = req;
    const a = core.repo.attempts.get(step.id);
    // Fenced: only the worker that holds the claim of exactly this attempt may settle it, once.
    if (!a || a.run_id !== step.run || a.path !== step.path || a.attempt !== step.attempt) {
      return { recorded: false };
    }
    if (a.status !== "running" || a.owner !== worker) return { recorded: false };
    const recorded = await recordOutcome(core, {
      attempt: a,
      state: core.stateOf(a),
      outcome: req.outcome as Outcome,
      owner: worker,
    });
    if (recorded) {
      core.stats.remote++;
      await core.opts.ledger?.durable();
    }
    return { recorded };
  }

  #heartbeat(hb: Heartbeat): { leaseMs: number } {
    const core = this.#core;
    const now = core.clock.now();
    this.#seen.set(hb.worker, { hb, at: now });
    if (hb.steps.length > 0) {
      core.repo.transaction(() =>
        core.repo.apply(hb.steps.map((s) => ({
          kind: "renew_lease" as const,
          attemptId: s.id,
          owner: hb.worker,
          leaseUntil: now + core.opts.leaseMs,
        })))
      );
    }
    return { leaseMs: core.opts.leaseMs };
  }

  /** Lapses the worker's leases of these steps and dispatches them again, so another worker reclaims them now. */
  async #release(req: ReleaseRequest): Promise<{ released: number }> {
    const core = this.#core;
    core.repo.transaction(() =>
      core.repo.apply(req.steps.map((s) => ({
        kind: "renew_lease" as const,
        attemptId: s.id,
        owner: req.worker,
        leaseUntil: 0,
      })))
    );
    const released = req.steps.filter((s) => {
      const a = core.repo.attempts.get(s.id);
      return a?.status === "running" && a.owner === req.worker && a.lease_until === 0;
    });
    for (const s of released) {
      await core.publishAll([s], core.repo.runs.get(s.run)?.traceparent ?? null);
    }
    return { released: released.length };
  }

  /** Fails scheduled steps that waited their whole timeout on a queue no live worker serves. */
  async #expireUnserved(): Promise<void> {
    const core = this.#core;
    const now = core.clock.now();
    // Just started: live workers have not all sent a heartbeat yet (they do within a lease).
    if (core.stopping || now - this.#startedAt < core.opts.leaseMs) return;
    const served = this.served();
    for (const a of core.repo.attempts.lost(now, 0)) {
      if (a.status !== "scheduled" || core.repo.timers.retryPending(a.id)) continue;
      const queue = core.queueOf(a.id);
      if (served.has(queue)) continue;
      const state = core.stateOf(a);
      const timeoutMs = timeoutOf(core.definition(a.run_id), state, core.opts.defaultTimeoutMs) ??
        core.opts.defaultTimeoutMs;
      if (Date.parse(a.created_at) + timeoutMs > now) continue;
      let traceparent: string | null = null;
      const messages = core.commit(() => {
        const run = core.snapshot(a.run_id, a.id);
        if (!run) return [];
        traceparent = run.run.traceparent;
        return expireUnserved(run, { attemptId: a.id, queue, timeoutMs }, core.env());
      });
      core.notify(a.run_id);
      await core.publishAll(messages, traceparent);
    }
  }
}
