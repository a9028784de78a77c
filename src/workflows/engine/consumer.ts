import type { JsMsg } from "@nats-io/jetstream";
import { log, logEnabled } from "../../log.ts";
import { withLogFields } from "../../log_scope.ts";
import { countRedelivery, observeStep } from "../../telemetry/metrics.ts";
import { failSpan, inSpan, tracingEnabled } from "../../telemetry/tracing.ts";
import type { State } from "../definition/schema.ts";
import { executeStep } from "../steps/execute.ts";
import type { Outcome } from "../steps/types.ts";
import { timeoutOf } from "./blocks.ts";
import { joinedChildren, recordOutcome } from "./claims.ts";
import type { EngineCore } from "./core.ts";
import type { StepMessage } from "./dispatch.ts";
import type { AttemptRow } from "./ledger.ts";
import type { Slot } from "./slots.ts";
import { errorMessage } from "../../errors.ts";

/**
 * The step consumer: pulls step messages, claims each attempt under a lease (fencing), runs its
 * executor with heartbeats, and records the outcome in one transaction.
 */
export class Consumer {
  #core: EngineCore;
  #messages?: { close: () => Promise<void> };
  #pulling = false;

  constructor(core: EngineCore) {
    this.#core = core;
  }

  /** Whether this process runs eagerly claimed steps: from start on (never with `workers: 0`). */
  get pulling(): boolean {
    return this.#pulling;
  }

  /** Runs an attempt this process claimed eagerly, holding `slot` until it is done. */
  runHere(attempt: AttemptRow, slot: Slot): void {
    const gate = this.#core.gate;
    const mark = gate.mark();
    const ran = gate.readyHere().then(() => this.runClaimed(attempt, { slot, mark }));
    void this.#core.track(ran.then(() => slot.free()));
  }

  /** Starts pulling, at most `workers` steps at a time (eager claims included). */
  async start(): Promise<void> {
    const core = this.#core;
    this.#pulling = true;
    this.#messages = await core.dispatch.consume(
      core.slots,
      (m, slot) => core.track(this.#onMessage(m, slot)),
    );
  }

  /** Stops pulling new messages. */
  async close(): Promise<void> {
    await this.#messages?.close();
  }

  async #onMessage(msg: JsMsg, slot: Slot): Promise<void> {
    const core = this.#core;
    if (msg.redelivered) countRedelivery();
    let m: StepMessage;
    try {
      m = JSON.parse(msg.string());
    } catch {
      msg.term("undecodable step message");
      return;
    }
    const decision = await core.claimSoon(m);
    if (decision.kind === "drop") {
      if (decision.commands) core.notify(m.run); // parked by its step's limits
      core.stats.dropped++;
      msg.ack();
      return;
    }
    if (decision.kind === "busy") {
      msg.nak(decision.retryMs);
      return;
    }
    core.notify(m.run);
    const mark = core.gate.mark();
    await core.gate.ready();
    const recorded = await this.runClaimed(decision.attempt, {
      working: () => msg.working(),
      traceparent: msg.headers?.get("traceparent") || undefined,
      slot,
      mark,
    });
    if (!recorded && core.stopping) return;
    if (recorded) await core.opts.ledger?.durable();
    msg.ack();
  }

  /**
   * Runs an attempt this station holds the claim of — taken from its own queue, or handed over by a
   * `stn worker` (a station-only step) or claimed eagerly — renewing its lease meanwhile, and records the
   * outcome (its `slot`, when it holds one, passes to the steps it dispatches). `mark` is the gate's mark
   * taken when the claim committed (`StepGate`). True when recorded; false leaves the claim to lapse, so
   * recovery runs the attempt again.
   */
  async runClaimed(
    attempt: AttemptRow,
    opts: { working?: () => void; traceparent?: string; slot?: Slot; mark: number },
  ): Promise<boolean> {
    const core = this.#core;
    const abort = new AbortController();
    core.inflight.set(attempt.id, { run: attempt.run_id, abort });
    const heartbeat = setInterval(() => {
      opts.working?.();
      core.repo.apply([{
        kind: "renew_lease",
        attemptId: attempt.id,
        owner: core.owner,
        leaseUntil: core.clock.now() + core.opts.leaseMs,
      }]);
    }, Math.max(100, Math.min(core.opts.ackWaitMs, core.opts.leaseMs) / 3));
    try {
      core.stats.executed++;
      core.gate.started(opts.mark);
      const state = core.stateOf(attempt);
      const outcome = await this.#observed(opts.traceparent, attempt, state, abort.signal);
      if (core.stopping && abort.signal.aborted) return false; // abandoned: the claim lapses and recovery re-runs it
      await recordOutcome(core, { attempt, state, outcome, owner: core.owner, slot: opts.slot });
      return true;
    } catch (err) {
      // Not recorded (e.g. the ledger was busy): the claim lapses and the sweep runs the attempt again.
      log.error("step outcome not recorded", {
        run_id: attempt.run_id,
        step: attempt.path,
        error: errorMessage(err),
      });
      return false;
    } finally {
      clearInterval(heartbeat);
      core.inflight.delete(attempt.id);
    }
  }

  /**
   * Executes the attempt inside its span (a child of the run's span, named by the message's traceparent or,
   * for a message published before tracing was on, the run's stored one), timed for /metrics, with the
   * run and step on its log lines (and a debug line for it).
   */
  #observed(
    traceparent: string | undefined,
    attempt: AttemptRow,
    state: State,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const started = performance.now();
    const attributes = {
      "stn.run.id": attempt.run_id,
      "stn.step.path": attempt.path,
      "stn.step.attempt": attempt.attempt,
      "stn.step.type": state.type,
    };
    const parent = tracingEnabled
      ? traceparent || this.#core.repo.runs.get(attempt.run_id)?.traceparent
      : undefined;
    return withLogFields(
      { run_id: attempt.run_id, step: attempt.path },
      () =>
        inSpan(`workflow.step ${attempt.path}`, attributes, async (span) => {
          const outcome = await this.#execute(attempt, state, signal).catch((err): Outcome => ({
            kind: "failed",
            error: { code: "internal_error", message: errorMessage(err) },
          }));
          if (outcome.kind === "failed") failSpan(span, outcome.error);
          const seconds = (performance.now() - started) / 1000;
          observeStep(state.type, outcome.kind, seconds);
          if (logEnabled("debug")) {
            log.debug("step attempt ran", {
              attempt: attempt.attempt,
              type: state.type,
              outcome: outcome.kind,
              ms: Math.round(seconds * 10_000) / 10,
            });
          }
          return outcome;
        }, { parent: parent ?? null }),
    );
  }

  /** Runs the executor under the step's timeout and the run's cancel signal (or joins finished children). */
  async #execute(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    return joinedChildren(this.#core, attempt, state) ?? await this.#runExecutor(attempt, state, signal);
  }

  #runExecutor(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const core = this.#core;
    const def = core.definition(attempt.run_id);
    return executeStep(state, core.scope(attempt.run_id, attempt.scope), {
      runId: attempt.run_id,
      workflowId: def.id,
      path: attempt.path,
      attempt: attempt.attempt,
      visit: attempt.visit,
      signal,
      sandbox: core.opts.sandbox,
      agents: core.opts.agents,
      now: () => core.clock.now(),
    }, timeoutOf(def, state, core.opts.defaultTimeoutMs) ?? core.opts.defaultTimeoutMs);
  }
}
