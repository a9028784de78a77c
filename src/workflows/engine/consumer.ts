import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { StationError } from "../../errors.ts";
import { log, logEnabled, withLogFields } from "../../log.ts";
import { countRedelivery, observeStep } from "../../telemetry/metrics.ts";
import { failSpan, inSpan, tracingEnabled } from "../../telemetry/tracing.ts";
import type { State } from "../definition/schema.ts";
import { executorFor } from "../steps/registry.ts";
import type { Outcome } from "../steps/types.ts";
import { join, timeoutOf } from "./blocks.ts";
import type { EngineCore } from "./core.ts";
import type { StepMessage } from "./dispatch.ts";
import { claim, type ClaimDecision } from "./fencing.ts";
import type { AttemptRow, FanoutMeta } from "./ledger.ts";
import { type Prepared, settle } from "./transitions.ts";

/**
 * The step consumer: pulls step messages, claims each attempt under a lease (fencing), runs its
 * executor with heartbeats, and records the outcome in one transaction.
 */
export class Consumer {
  #core: EngineCore;
  #messages?: ConsumerMessages;

  constructor(core: EngineCore) {
    this.#core = core;
  }

  /** Starts pulling, at most `workers` steps at a time. */
  async start(): Promise<void> {
    const core = this.#core;
    this.#messages = await core.dispatch.consume(core.opts.workers, (m) => core.track(this.#onMessage(m)));
  }

  /** Stops pulling new messages. */
  async close(): Promise<void> {
    await this.#messages?.close().catch(() => {});
  }

  async #onMessage(msg: JsMsg): Promise<void> {
    const core = this.#core;
    if (msg.redelivered) countRedelivery();
    let m: StepMessage;
    try {
      m = JSON.parse(msg.string());
    } catch {
      msg.term("undecodable step message");
      return;
    }
    const decision = this.#claim(m);
    if (decision.kind === "drop") {
      core.stats.dropped++;
      msg.ack();
      return;
    }
    if (decision.kind === "busy") {
      msg.nak(decision.retryMs);
      return;
    }
    core.notify(m.run);
    const attempt = decision.attempt;
    const abort = new AbortController();
    core.inflight.set(attempt.id, { run: attempt.run_id, abort });
    const heartbeat = setInterval(() => {
      msg.working();
      core.repo.apply([{
        kind: "renew_lease",
        attemptId: attempt.id,
        owner: core.owner,
        leaseUntil: core.clock.now() + core.opts.leaseMs,
      }]);
    }, Math.max(100, Math.min(core.opts.ackWaitMs, core.opts.leaseMs) / 3));
    let recorded = false;
    try {
      core.stats.executed++;
      const state = core.stateOf(attempt);
      const outcome = await this.#observed(msg, attempt, state, abort.signal);
      if (core.stopping && abort.signal.aborted) return; // abandoned: the claim lapses and recovery re-runs it
      const prepared = await core.prepare(attempt, state, outcome);
      let traceparent: string | null = null;
      const messages = core.commit(() => {
        const run = core.snapshot(attempt.run_id, attempt.id);
        if (!run) return [];
        traceparent = run.run.traceparent;
        return settle(run, {
          attemptId: attempt.id,
          from: "running",
          prepared,
          ...this.#fanoutBase(prepared, attempt),
        }, core.env());
      });
      recorded = true;
      core.notify(attempt.run_id);
      await core.publishAll(messages, traceparent);
    } catch (err) {
      // Not recorded (e.g. the ledger was busy): the claim lapses and the sweep runs the attempt again.
      log.error("step outcome not recorded", {
        run_id: attempt.run_id,
        step: attempt.path,
        error: (err as Error).message,
      });
    } finally {
      clearInterval(heartbeat);
      core.inflight.delete(attempt.id);
      if (recorded || !core.stopping) msg.ack();
    }
  }

  /**
   * Executes the attempt inside its span (a child of the run's span, named by the message's traceparent or,
   * for a message published before tracing was on, the run's stored one), timed for /metrics, with the
   * run and step on its log lines (and a debug line for it).
   */
  #observed(msg: JsMsg, attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const started = performance.now();
    const attributes = {
      "stn.run.id": attempt.run_id,
      "stn.step.path": attempt.path,
      "stn.step.attempt": attempt.attempt,
      "stn.step.type": state.type,
    };
    const parent = tracingEnabled
      ? msg.headers?.get("traceparent") || this.#core.repo.runs.get(attempt.run_id)?.traceparent
      : undefined;
    return withLogFields(
      { run_id: attempt.run_id, step: attempt.path },
      () =>
        inSpan(`workflow.step ${attempt.path}`, attributes, async (span) => {
          const outcome = await this.#execute(attempt, state, signal).catch((err): Outcome => ({
            kind: "failed",
            error: { code: "internal_error", message: (err as Error).message },
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

  /** A fanout's child scopes start from the parent's scope, as it is in the transaction. */
  #fanoutBase(p: Prepared, a: AttemptRow) {
    return p.outcome.kind === "fanout" ? { scopeContext: this.#core.scope(a.run_id, a.scope) } : {};
  }

  /** Fencing: decides, in one transaction, whether this message may run its attempt. */
  #claim(m: StepMessage): ClaimDecision {
    const core = this.#core;
    return core.repo.transaction(() => {
      const a = core.repo.attempts.get(m.id);
      const decision = claim({
        message: m,
        attempt: a,
        run: a && core.repo.runs.get(a.run_id),
        inflight: a !== undefined && core.inflight.has(a.id),
        retryPending: a?.status === "scheduled" && core.repo.timers.retryPending(a.id),
      }, core.env());
      if (decision.kind === "run") core.repo.apply(decision.commands);
      return decision;
    });
  }

  /** Runs the executor under the step's timeout and the run's cancel signal (or joins finished children). */
  async #execute(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const children = this.#core.repo.scopes.children(attempt.id);
    // A requeued fanout parent keeps its FanoutMeta in `output` until its children are joined.
    if (children.length > 0) return join((JSON.parse(attempt.output!) as FanoutMeta).join, state, children);
    const outcome = await this.#runExecutor(attempt, state, signal);
    if (outcome.kind === "fanout" && outcome.blocks.length === 0) return join(outcome.join, state, []);
    return outcome;
  }

  async #runExecutor(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const core = this.#core;
    const executor = executorFor(state)!;
    const scope = core.scope(attempt.run_id, attempt.scope);
    const def = core.definition(attempt.run_id);
    const timeoutMs = timeoutOf(def, state, core.opts.defaultTimeoutMs) ?? core.opts.defaultTimeoutMs;
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new StationError("step_timeout", `step exceeded its timeout of ${timeoutMs}ms`)),
      timeoutMs,
    );
    const both = AbortSignal.any([signal, timeout.signal]);
    try {
      const aborted = new Promise<Outcome>((resolve) => {
        const onAbort = () => {
          const reason = both.reason;
          resolve({
            kind: "failed",
            error: reason instanceof StationError
              ? { code: reason.code, message: reason.message }
              : { code: "canceled", message: "step aborted" },
          });
        };
        if (both.aborted) onAbort();
        else both.addEventListener("abort", onAbort, { once: true });
      });
      return await Promise.race([
        executor(state, scope, {
          runId: attempt.run_id,
          workflowId: def.id,
          path: attempt.path,
          attempt: attempt.attempt,
          visit: attempt.visit,
          signal: both,
          sandbox: core.opts.sandbox,
          agents: core.opts.agents,
        }).catch((err): Outcome => ({
          kind: "failed",
          error: { code: (err as StationError).code ?? "step_error", message: (err as Error).message },
        })),
        aborted,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
