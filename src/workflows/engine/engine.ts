import type { SandboxService } from "../../sandbox/service.ts";
import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { ulid } from "ulid";
import { type Database, transaction } from "../../db/database.ts";
import { StationError } from "../../errors.ts";
import { parseDuration } from "../../lib/duration.ts";
import { log } from "../../log.ts";
import type { Block, RetryPolicy, State, WorkflowDefinition } from "../definition/schema.ts";
import { executorFor } from "../executors/index.ts";
import type { ChildBlock, Failure, Outcome, Scope } from "../executors/types.ts";
import type { RunTrigger } from "../trigger.ts";
import { checkInput, outputProblem } from "./io_schema.ts";
import { applyOutput, blockStart, findState, initialContext } from "./dataflow.ts";
import { Dispatcher, newTraceparent, provisionQueue, type StepMessage } from "./dispatch.ts";
import {
  type ApprovalRow,
  type AttemptRow,
  Ledger,
  now,
  type RunRow,
  type RunStatus,
  type ScopeRow,
  type StepError,
  TERMINAL_RUN,
  type TimerKind,
  type TimerRow,
} from "./ledger.ts";

/** Engine settings (config section `engine`). */
export interface EngineOptions {
  workers: number;
  ackWaitMs: number;
  maxDeliver: number;
  leaseMs: number;
  defaultTimeoutMs: number;
  /** Handed to executors of `sandbox` steps. */
  sandbox?: SandboxService;
}

/** How a run is started. */
export interface StartRunRequest {
  definition: WorkflowDefinition;
  workflowVersion?: number | null;
  input: Record<string, unknown>;
  traceparent?: string | null;
  /** What started the run (`workflow.trigger` in its context); the API and the scheduler always say. */
  trigger?: RunTrigger;
}

/** Counters for tests and benchmarks. */
export interface EngineStats {
  executed: number;
  dropped: number;
}

/** Where a fanout's children are joined: parallel `{name: output}`, foreach `{results, count}`, try stages. */
type Join = "parallel" | "foreach" | "try";
interface FanoutMeta {
  join: Join;
  maxConcurrency: number;
}

const CANCEL_SUBJECT = "stn.engine.cancel";

/**
 * The durable workflow engine (DESIGN §4). Every transition is one SQLite transaction that also
 * appends the run's events; JetStream messages only say "run attempt N now", and a message is
 * executed only if the ledger still expects exactly that attempt of an active run.
 */
export class Engine {
  readonly ledger: Ledger;
  readonly stats: EngineStats = { executed: 0, dropped: 0 };
  /** This process's identity in attempt claims. */
  readonly owner = ulid();
  #nc: NatsConnection;
  #opts: EngineOptions;
  #dispatch: Dispatcher;
  #messages?: ConsumerMessages;
  #cancelSub?: Subscription;
  #inflight = new Map<number, { run: string; abort: AbortController }>();
  #handlers = new Set<Promise<void>>();
  #definitions = new Map<string, WorkflowDefinition>();
  #watchers = new Map<string, Set<() => void>>();
  #timer?: ReturnType<typeof setTimeout>;
  #sweeper?: ReturnType<typeof setInterval>;
  #stopping = false;
  #ended = new Set<string>();
  #endHooks = new Set<(runId: string) => void>();

  constructor(db: Database, nc: NatsConnection, options: EngineOptions) {
    this.ledger = new Ledger(db);
    this.#nc = nc;
    this.#opts = options;
    this.#dispatch = new Dispatcher(nc);
  }

  /** Provisions the queue, reconciles from the ledger, then starts consuming and firing timers. */
  async start(): Promise<void> {
    await provisionQueue(this.#nc, {
      ackWaitMs: this.#opts.ackWaitMs,
      maxDeliver: this.#opts.maxDeliver,
      maxAckPending: Math.max(1000, this.#opts.workers * 4),
    });
    this.#cancelSub = this.#nc.subscribe(`${CANCEL_SUBJECT}.*`, {
      callback: (_err, msg) => this.#abortRun(msg.subject.slice(CANCEL_SUBJECT.length + 1)),
    });
    this.#messages = await this.#dispatch.consume(this.#opts.workers, (m) => this.#track(this.#onMessage(m)));
    await this.#sweep(true);
    this.#sweeper = setInterval(() => this.#track(this.#sweep(false)), Math.max(250, this.#opts.leaseMs / 2));
    this.#armTimers();
  }

  /** Stops consuming; in-flight steps get a short grace period, then their claims lapse for recovery. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#sweeper);
    clearTimeout(this.#timer);
    this.#cancelSub?.unsubscribe();
    await this.#messages?.close().catch(() => {});
    const pending = Promise.allSettled([...this.#handlers]);
    await Promise.race([pending, new Promise((r) => setTimeout(r, 2000))]);
    for (const { abort } of this.#inflight.values()) {
      abort.abort(new StationError("shutdown", "station stopping"));
    }
    await Promise.race([pending, new Promise((r) => setTimeout(r, 500))]);
  }

  /** Calls fn whenever events are appended to the run (in this process). Returns the unsubscribe. */
  watch(runId: string, fn: () => void): () => void {
    let set = this.#watchers.get(runId);
    if (!set) this.#watchers.set(runId, set = new Set());
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0) this.#watchers.delete(runId);
    };
  }

  // ---------------------------------------------------------------- runs

  /** Creates a run and dispatches its first step. */
  async startRun(req: StartRunRequest): Promise<RunRow> {
    const def = req.definition;
    const input = checkInput(def, req.input);
    const id = ulid();
    const first = blockStart(def as Block);
    const traceparent = newTraceparent(req.traceparent);
    const toPublish: StepMessage[] = [];
    transaction(this.ledger.db, () => {
      const t = now();
      this.ledger.run(
        `INSERT INTO workflow_runs (id, workflow_id, workflow_version, definition, status, input, traceparent,
           created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
        id,
        def.id,
        req.workflowVersion ?? null,
        JSON.stringify(def),
        JSON.stringify(input),
        traceparent,
        t,
        t,
      );
      this.ledger.run(
        "INSERT INTO run_scopes (run_id, scope, status, context) VALUES (?, '', 'running', ?)",
        id,
        JSON.stringify(initialContext(input, id, def.id, req.trigger)),
      );
      this.ledger.appendEvent(id, "run_created", null, { workflow_id: def.id, input });
      toPublish.push(this.#schedule(id, "", first, 1));
    });
    this.#notify(id);
    await this.#publishAll(toPublish, traceparent);
    return this.ledger.getRun(id)!;
  }

  /** Cancels a run: in-flight executors are aborted, approvals and timers canceled, nothing runs after. */
  cancel(runId: string, reason = "canceled by request"): RunRow {
    transaction(this.ledger.db, () => {
      const run = this.#requireRun(runId);
      if (TERMINAL_RUN.includes(run.status)) {
        throw new StationError("run_finished", `run ${runId} already ${run.status}`, { status: 409 });
      }
      this.#finishRun(run, "canceled", null, { code: "canceled", message: reason });
    });
    this.#notify(runId);
    this.#abortRun(runId);
    this.#nc.publish(`${CANCEL_SUBJECT}.${runId}`);
    return this.ledger.getRun(runId)!;
  }

  /** Pauses a run: the running step finishes, nothing new starts until resume. */
  pause(runId: string): RunRow {
    transaction(this.ledger.db, () => {
      const run = this.#requireRun(runId);
      if (run.status === "paused") return;
      if (TERMINAL_RUN.includes(run.status)) {
        throw new StationError("run_finished", `run ${runId} already ${run.status}`, { status: 409 });
      }
      this.ledger.setRunStatus(runId, "paused");
      this.ledger.appendEvent(runId, "run_paused", null);
    });
    this.#notify(runId);
    return this.ledger.getRun(runId)!;
  }

  /** Resumes a paused run exactly where it stopped. */
  async resume(runId: string): Promise<RunRow> {
    const scheduled = transaction(this.ledger.db, () => {
      const run = this.#requireRun(runId);
      if (run.status !== "paused") {
        throw new StationError("run_not_paused", `run ${runId} is ${run.status}, not paused`, {
          status: 409,
        });
      }
      this.ledger.setRunStatus(runId, "running");
      this.ledger.appendEvent(runId, "run_resumed", null);
      this.#refreshRunStatus(runId);
      return this.ledger.all<AttemptRow>(
        "SELECT * FROM step_attempts WHERE run_id = ? AND status = 'scheduled'",
        runId,
      );
    });
    this.#notify(runId);
    const run = this.ledger.getRun(runId)!;
    // Attempts waiting out a retry backoff are published by their timer.
    const due = scheduled.filter((a) => !this.#hasPendingTimer(a.id));
    await this.#publishAll(due.map(toMessage), run.traceparent);
    return run;
  }

  /** Records an approval decision and continues the run; a second decision is a 409. */
  async decide(approvalId: string, approved: boolean, actor: string, comment?: string): Promise<ApprovalRow> {
    const approval = this.ledger.get<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", approvalId);
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
    const attempt = this.ledger.getAttempt(approval.attempt_id)!;
    const state = this.#stateOf(attempt);
    if (state.type !== "human_approval") throw new Error("approval attached to a non-approval step");
    const decision = { approved, decided_by: actor, comment: comment ?? null, decided_at: now() };
    const outcome: Outcome = approved
      ? { kind: "completed", output: decision }
      : state.onReject
      ? { kind: "completed", output: decision, next: state.onReject }
      : { kind: "failed", error: { code: "approval_rejected", message: `rejected by ${actor}` } };
    const prepared = await this.#prepare(attempt, state, outcome);
    const messages = transaction(this.ledger.db, () => {
      const changed = this.ledger.run(
        `UPDATE approvals SET status = ?, decided_by = ?, comment = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
        approved ? "approved" : "rejected",
        actor,
        comment ?? null,
        decision.decided_at,
        approvalId,
      );
      if (changed === 0) {
        const now = this.ledger.get<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", approvalId)!;
        throw new StationError("approval_decided", `approval ${approvalId} is already ${now.status}`, {
          status: 409,
        });
      }
      this.ledger.run(
        "UPDATE timers SET status = 'canceled' WHERE attempt_id = ? AND status = 'pending'",
        attempt.id,
      );
      this.ledger.appendEvent(attempt.run_id, "approval_decided", attempt.path, {
        approval_id: approvalId,
        ...decision,
      });
      return this.#settle(attempt.id, "waiting", prepared);
    });
    this.#notify(attempt.run_id);
    await this.#publishAll(messages, this.ledger.getRun(attempt.run_id)!.traceparent);
    return this.ledger.get<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", approvalId)!;
  }

  // ---------------------------------------------------------------- dispatch

  #track(p: Promise<void>): Promise<void> {
    const tracked = p.catch((err) => log.error("engine task failed", { error: (err as Error).message }))
      .finally(() => this.#handlers.delete(tracked));
    this.#handlers.add(tracked);
    return tracked;
  }

  async #onMessage(msg: JsMsg): Promise<void> {
    let m: StepMessage;
    try {
      m = JSON.parse(msg.string());
    } catch {
      msg.term("undecodable step message");
      return;
    }
    const claim = this.#claim(m);
    if (claim.kind === "drop") {
      this.stats.dropped++;
      msg.ack();
      return;
    }
    if (claim.kind === "busy") {
      msg.nak(claim.retryMs);
      return;
    }
    this.#notify(m.run);
    const attempt = claim.attempt;
    const abort = new AbortController();
    this.#inflight.set(attempt.id, { run: attempt.run_id, abort });
    const heartbeat = setInterval(() => {
      msg.working();
      this.ledger.run(
        "UPDATE step_attempts SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
        Date.now() + this.#opts.leaseMs,
        attempt.id,
        this.owner,
      );
    }, Math.max(100, Math.min(this.#opts.ackWaitMs, this.#opts.leaseMs) / 3));
    let recorded = false;
    try {
      this.stats.executed++;
      const state = this.#stateOf(attempt);
      const outcome = await this.#execute(attempt, state, abort.signal).catch((err): Outcome => ({
        kind: "failed",
        error: { code: "internal_error", message: (err as Error).message },
      }));
      if (this.#stopping && abort.signal.aborted) return; // abandoned: the claim lapses and recovery re-runs it
      const prepared = await this.#prepare(attempt, state, outcome);
      const messages = transaction(this.ledger.db, () => this.#settle(attempt.id, "running", prepared));
      recorded = true;
      this.#notify(attempt.run_id);
      await this.#publishAll(messages, this.ledger.getRun(attempt.run_id)?.traceparent ?? null);
    } catch (err) {
      // Not recorded (e.g. the ledger was busy): the claim lapses and the sweep runs the attempt again.
      log.error("step outcome not recorded", {
        run: attempt.run_id,
        step: attempt.path,
        error: (err as Error).message,
      });
    } finally {
      clearInterval(heartbeat);
      this.#inflight.delete(attempt.id);
      if (recorded || !this.#stopping) msg.ack();
    }
  }

  /** Fencing: decides, in one transaction, whether this message may run its attempt. */
  #claim(
    m: StepMessage,
  ): { kind: "run"; attempt: AttemptRow } | { kind: "drop" } | { kind: "busy"; retryMs: number } {
    return transaction(this.ledger.db, () => {
      const a = this.ledger.getAttempt(m.id);
      if (!a || a.run_id !== m.run || a.path !== m.path || a.attempt !== m.attempt) return { kind: "drop" };
      const run = this.ledger.getRun(a.run_id)!;
      if (TERMINAL_RUN.includes(run.status) || run.status === "paused") return { kind: "drop" };
      if (a.status === "running") {
        if (this.#inflight.has(a.id)) return { kind: "drop" };
        // Claimed by a worker that may be alive: come back when its lease would have lapsed.
        const left = (a.lease_until ?? 0) - Date.now();
        if (left > 0) return { kind: "busy", retryMs: left + 50 };
        this.ledger.appendEvent(a.run_id, "step_reclaimed", a.path, {
          attempt: a.attempt,
          previous_owner: a.owner,
        });
      } else if (a.status !== "scheduled" || this.#hasPendingTimer(a.id)) {
        return { kind: "drop" };
      }
      const t = now();
      this.ledger.run(
        `UPDATE step_attempts SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
         WHERE id = ?`,
        this.owner,
        Date.now() + this.#opts.leaseMs,
        t,
        a.id,
      );
      if (run.status === "pending") {
        this.ledger.run("UPDATE workflow_runs SET started_at = ? WHERE id = ?", t, run.id);
        this.ledger.appendEvent(run.id, "run_started", null);
      }
      this.ledger.appendEvent(a.run_id, "step_started", a.path, { attempt: a.attempt, type: a.step_type });
      this.#refreshRunStatus(run.id);
      return { kind: "run", attempt: { ...a, status: "running" } };
    });
  }

  /** Runs the executor under the step's timeout and the run's cancel signal (or joins finished children). */
  async #execute(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const children = this.ledger.all<ScopeRow>(
      "SELECT * FROM run_scopes WHERE parent_attempt = ? ORDER BY position",
      attempt.id,
    );
    if (children.length > 0) return this.#join(state, children);
    if (state.type === "try") {
      return {
        kind: "fanout",
        join: "try",
        blocks: [{ key: "try", block: state.try, vars: {} }],
        maxConcurrency: 1,
      };
    }
    const outcome = await this.#runExecutor(attempt, state, signal);
    if (outcome.kind === "fanout" && outcome.blocks.length === 0) return this.#join(state, []);
    return outcome;
  }

  async #runExecutor(attempt: AttemptRow, state: State, signal: AbortSignal): Promise<Outcome> {
    const executor = executorFor(state)!;
    const scope = JSON.parse(this.ledger.getScope(attempt.run_id, attempt.scope)!.context) as Scope;
    const def = this.#definition(attempt.run_id);
    const timeoutMs = this.#timeoutOf(attempt.run_id, state) ?? this.#opts.defaultTimeoutMs;
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
          signal: both,
          sandbox: this.#opts.sandbox,
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

  /** The outcome of a fanout step whose children have all finished (or the next try stage). */
  #join(state: State, children: ScopeRow[]): Outcome {
    const out = (s: ScopeRow) => (s.output === null ? null : JSON.parse(s.output));
    const err = (s: ScopeRow): Failure => JSON.parse(s.error!);
    if (state.type === "try") {
      const by = new Map(children.map((c) => [c.key, c]));
      const tryScope = by.get("try")!, catchScope = by.get("catch"), finallyScope = by.get("finally");
      const stage = (key: string, block: Block, vars: Record<string, unknown>): Outcome => ({
        kind: "fanout",
        join: "try",
        maxConcurrency: 1,
        blocks: [{ key, block, vars }],
      });
      const tryError = tryScope.status === "failed" ? { ...err(tryScope) } : undefined;
      if (!catchScope && !finallyScope) {
        if (tryError && state.catch) return stage("catch", state.catch, { _error: tryError });
        if (state.finally) return stage("finally", state.finally, tryError ? { _error: tryError } : {});
      } else if (catchScope && !finallyScope && state.finally) {
        return stage("finally", state.finally, { _error: tryError });
      }
      if (finallyScope?.status === "failed") return { kind: "failed", error: err(finallyScope) };
      if (catchScope) {
        return catchScope.status === "failed"
          ? { kind: "failed", error: err(catchScope) }
          : { kind: "completed", output: out(catchScope) };
      }
      return tryError ? { kind: "failed", error: tryError } : { kind: "completed", output: out(tryScope) };
    }
    const failedChild = children.find((c) => c.status === "failed");
    if (failedChild) return { kind: "failed", error: err(failedChild) };
    if (state.type === "foreach") {
      return { kind: "completed", output: { results: children.map(out), count: children.length } };
    }
    return { kind: "completed", output: Object.fromEntries(children.map((c) => [c.key, out(c)])) };
  }

  /** The async part of recording an outcome (expressions in `output` mappings), done before the transaction. */
  async #prepare(attempt: AttemptRow, state: State, outcome: Outcome): Promise<Prepared> {
    if (outcome.kind !== "completed") return { outcome, state };
    const scope = JSON.parse(this.ledger.getScope(attempt.run_id, attempt.scope)!.context) as Scope;
    try {
      return { outcome, state, context: await applyOutput(scope, state, outcome.output) };
    } catch (err) {
      return {
        state,
        outcome: { kind: "failed", error: { code: "output_mapping_error", message: (err as Error).message } },
      };
    }
  }

  /**
   * Records an outcome if the attempt is still `from` (fencing), then advances the run. Runs inside
   * a transaction; returns the step messages to publish after commit.
   */
  #settle(attemptId: number, from: "running" | "waiting", p: Prepared): StepMessage[] {
    const a = this.ledger.getAttempt(attemptId);
    const run = a && this.ledger.getRun(a.run_id);
    if (!a || !run || a.status !== from || (from === "running" && a.owner !== this.owner)) return [];
    if (TERMINAL_RUN.includes(run.status)) return [];
    const out: StepMessage[] = [];
    const { outcome, state } = p;
    const t = now();
    if (outcome.kind === "completed" || outcome.kind === "failed") {
      this.ledger.run(
        "UPDATE timers SET status = 'canceled' WHERE attempt_id = ? AND kind = 'step_timeout' AND status = 'pending'",
        a.id,
      );
    }
    switch (outcome.kind) {
      case "completed": {
        this.ledger.run(
          "UPDATE step_attempts SET status = 'completed', output = ?, completed_at = ?, owner = NULL WHERE id = ?",
          JSON.stringify(outcome.output ?? null),
          t,
          a.id,
        );
        this.ledger.run(
          "UPDATE run_scopes SET context = ? WHERE run_id = ? AND scope = ?",
          JSON.stringify(p.context),
          a.run_id,
          a.scope,
        );
        this.ledger.appendEvent(a.run_id, "step_completed", a.path, {
          attempt: a.attempt,
          output: outcome.output,
        });
        const next = outcome.next !== undefined ? outcome.next : state.end ? null : state.next ?? null;
        this.#advance(run, a, next, outcome.output, out);
        break;
      }
      case "failed":
        this.#fail(run, a, state, { ...outcome.error, step: a.path }, out);
        break;
      case "sleep": {
        this.#wait(a, "timer", outcome.until, { until: new Date(outcome.until).toISOString() });
        break;
      }
      case "approval": {
        const approvalId = `appr-${a.run_id}-${a.id}`;
        const timeoutAt = Date.now() + outcome.timeoutMs;
        this.ledger.run(
          `INSERT INTO approvals (id, run_id, attempt_id, step_id, message, approvers, status, timeout_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
          approvalId,
          a.run_id,
          a.id,
          a.step_id,
          outcome.message,
          JSON.stringify(outcome.approvers),
          new Date(timeoutAt).toISOString(),
          t,
        );
        this.ledger.appendEvent(a.run_id, "approval_requested", a.path, {
          approval_id: approvalId,
          message: outcome.message,
          approvers: outcome.approvers,
          timeout_at: new Date(timeoutAt).toISOString(),
        });
        this.#wait(a, "approval_timeout", timeoutAt, { approval_id: approvalId });
        break;
      }
      case "fanout": {
        this.ledger.run(
          "UPDATE step_attempts SET status = 'waiting', owner = NULL, output = ? WHERE id = ?",
          JSON.stringify({ join: outcome.join, maxConcurrency: outcome.maxConcurrency } satisfies FanoutMeta),
          a.id,
        );
        const base = JSON.parse(this.ledger.getScope(a.run_id, a.scope)!.context) as Scope;
        const existing = this.ledger.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM run_scopes WHERE parent_attempt = ?",
          a.id,
        )!.n;
        outcome.blocks.forEach((b: ChildBlock, i: number) => {
          const scope = `${a.path}${a.visit > 1 || a.attempt > 1 ? `#${a.visit}.${a.attempt}` : ""}/${b.key}`;
          const context = { ...structuredClone(base), ...b.vars };
          this.ledger.run(
            `INSERT INTO run_scopes (run_id, scope, parent_attempt, key, position, status, context)
             VALUES (?, ?, ?, ?, ?, 'pending', ?)`,
            a.run_id,
            scope,
            a.id,
            b.key,
            existing + i,
            JSON.stringify(context),
          );
        });
        const timeoutMs = this.#timeoutOf(a.run_id, state);
        if (existing === 0 && timeoutMs !== null) this.#addTimer(a, "step_timeout", Date.now() + timeoutMs);
        this.ledger.appendEvent(a.run_id, "step_fanout", a.path, {
          attempt: a.attempt,
          join: outcome.join,
          children: outcome.blocks.map((b) => b.key),
        });
        this.#startChildren(a, out);
        break;
      }
    }
    this.#refreshRunStatus(a.run_id);
    return out;
  }

  /** Puts a step into `waiting` with a durable timer row. */
  #wait(a: AttemptRow, kind: TimerKind, fireAt: number, data: Record<string, unknown>): void {
    this.ledger.run("UPDATE step_attempts SET status = 'waiting', owner = NULL WHERE id = ?", a.id);
    this.#addTimer(a, kind, fireAt);
    this.ledger.appendEvent(a.run_id, "step_waiting", a.path, { attempt: a.attempt, kind, ...data });
  }

  #addTimer(a: AttemptRow, kind: TimerKind, fireAt: number): void {
    this.ledger.insert(
      "INSERT INTO timers (run_id, attempt_id, kind, fire_at, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?)",
      a.run_id,
      a.id,
      kind,
      fireAt,
      now(),
    );
    queueMicrotask(() => this.#armTimers());
  }

  /** Starts pending children of a fanout up to its concurrency; requeues the parent when all are done. */
  #startChildren(parent: AttemptRow, out: StepMessage[]): void {
    const meta = JSON.parse(this.ledger.getAttempt(parent.id)!.output!) as FanoutMeta;
    const children = this.ledger.all<ScopeRow>(
      "SELECT * FROM run_scopes WHERE parent_attempt = ? ORDER BY position",
      parent.id,
    );
    let running = children.filter((c) => c.status === "running").length;
    for (const child of children) {
      if (running >= meta.maxConcurrency) break;
      if (child.status !== "pending") continue;
      this.ledger.run(
        "UPDATE run_scopes SET status = 'running' WHERE run_id = ? AND scope = ?",
        parent.run_id,
        child.scope,
      );
      running++;
      out.push(
        this.#schedule(parent.run_id, child.scope, blockStart(this.#blockOf(parent.run_id, child)), 1),
      );
    }
    if (children.every((c) => c.status !== "pending" && c.status !== "running")) this.#requeue(parent, out);
  }

  /** Schedules a fanout parent again so the next delivery joins its children. */
  #requeue(parent: AttemptRow, out: StepMessage[]): void {
    this.ledger.run(
      "UPDATE step_attempts SET status = 'scheduled', dispatched_at = ? WHERE id = ? AND status = 'waiting'",
      Date.now(),
      parent.id,
    );
    out.push(toMessage(parent));
  }

  /** After a completed step: the next step of the same block, or the block (or run) is done. */
  #advance(run: RunRow, a: AttemptRow, next: string | null, output: unknown, out: StepMessage[]): void {
    if (next) {
      const scopeRow = this.ledger.getScope(a.run_id, a.scope)!;
      const block = this.#blockOf(a.run_id, scopeRow);
      const state = findState(block, next);
      if (!state) {
        this.#fail(run, a, undefined, {
          code: "unknown_next_state",
          message: `step ${a.step_id} routes to "${next}", which is not a state of its block`,
          step: a.path,
        }, out);
        return;
      }
      // Scheduled even when paused: the claim drops its message and resume publishes it again.
      out.push(this.#schedule(a.run_id, a.scope, state, 1));
      return;
    }
    this.#endScope(run, a.scope, "completed", output, null, out);
  }

  /** Ends a block: the run for the top level, else the child scope of a fanout. */
  #endScope(
    run: RunRow,
    scope: string,
    status: "completed" | "failed",
    output: unknown,
    error: StepError | null,
    out: StepMessage[],
  ): void {
    if (scope === "") {
      const problem = status === "completed" ? outputProblem(this.#definition(run.id), output) : null;
      if (problem) {
        this.#finishRun(run, "failed", null, {
          code: "output_invalid",
          message: `result does not match outputSchema: ${problem}`,
        });
      } else this.#finishRun(run, status, output, error);
      return;
    }
    this.ledger.run(
      "UPDATE run_scopes SET status = ?, output = ?, error = ? WHERE run_id = ? AND scope = ?",
      status,
      JSON.stringify(output ?? null),
      error ? JSON.stringify(error) : null,
      run.id,
      scope,
    );
    const row = this.ledger.getScope(run.id, scope)!;
    const parent = this.ledger.getAttempt(row.parent_attempt!)!;
    if (parent.status !== "waiting") return;
    const state = this.#stateOf(parent);
    if (status === "failed" && state.type !== "try") {
      // Fail fast: siblings are canceled and the parent joins now.
      for (
        const sib of this.ledger.all<ScopeRow>(
          "SELECT * FROM run_scopes WHERE parent_attempt = ? AND status IN ('pending','running')",
          parent.id,
        )
      ) this.#cancelScope(run.id, sib.scope);
    }
    this.#startChildren(parent, out);
  }

  /** Cancels a scope, its active attempts and everything nested in them. */
  #cancelScope(runId: string, scope: string): void {
    this.ledger.run("UPDATE run_scopes SET status = 'canceled' WHERE run_id = ? AND scope = ?", runId, scope);
    const active = this.ledger.all<AttemptRow>(
      "SELECT * FROM step_attempts WHERE run_id = ? AND scope = ? AND status IN ('scheduled','running','waiting')",
      runId,
      scope,
    );
    for (const a of active) {
      this.#cancelAttempt(a);
      for (
        const child of this.ledger.all<ScopeRow>(
          "SELECT * FROM run_scopes WHERE parent_attempt = ? AND status IN ('pending','running')",
          a.id,
        )
      ) this.#cancelScope(runId, child.scope);
    }
  }

  #cancelAttempt(a: AttemptRow): void {
    this.ledger.run(
      "UPDATE step_attempts SET status = 'canceled', completed_at = ?, owner = NULL WHERE id = ?",
      now(),
      a.id,
    );
    this.ledger.run(
      "UPDATE timers SET status = 'canceled' WHERE attempt_id = ? AND status = 'pending'",
      a.id,
    );
    this.ledger.run(
      "UPDATE approvals SET status = 'canceled' WHERE attempt_id = ? AND status = 'pending'",
      a.id,
    );
    this.ledger.appendEvent(a.run_id, "step_canceled", a.path, { attempt: a.attempt });
    const local = this.#inflight.get(a.id);
    if (local) queueMicrotask(() => local.abort.abort(new StationError("canceled", "step canceled")));
  }

  /** A failed attempt: retried per policy (a new attempt row), else its block fails. */
  #fail(run: RunRow, a: AttemptRow, state: State | undefined, error: StepError, out: StepMessage[]): void {
    this.ledger.run(
      "UPDATE step_attempts SET status = 'failed', error = ?, completed_at = ?, owner = NULL WHERE id = ?",
      JSON.stringify(error),
      now(),
      a.id,
    );
    this.ledger.appendEvent(a.run_id, "step_failed", a.path, { attempt: a.attempt, error });
    const policy = state && retryPolicy(state, this.#definition(a.run_id));
    if (
      policy && a.attempt < policy.max_attempts && !policy.non_retryable.includes(error.code) &&
      error.code !== "canceled"
    ) {
      const delay = backoff(policy, a.attempt);
      const retry = this.#schedule(a.run_id, a.scope, state!, a.attempt + 1, a.visit);
      const row = this.ledger.getAttempt(retry.id)!;
      this.#addTimer(row, "retry", Date.now() + delay);
      this.ledger.appendEvent(a.run_id, "step_retry_scheduled", a.path, {
        attempt: a.attempt + 1,
        delay_ms: delay,
      });
      return;
    }
    this.#endScope(run, a.scope, "failed", null, error, out);
  }

  /** Inserts a scheduled attempt (and its event); returns its message. */
  #schedule(runId: string, scope: string, state: State, attempt: number, visit?: number): StepMessage {
    const path = scope === "" ? state.id : `${scope}/${state.id}`;
    const v = visit ?? (this.ledger.get<{ v: number }>(
      "SELECT COALESCE(MAX(visit), 0) + 1 AS v FROM step_attempts WHERE run_id = ? AND path = ?",
      runId,
      path,
    )!.v);
    const id = this.ledger.insert(
      `INSERT INTO step_attempts (run_id, scope, path, step_id, step_type, visit, attempt, status, dispatched_at,
         created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'scheduled', ?, ?)`,
      runId,
      scope,
      path,
      state.id,
      state.type,
      v,
      attempt,
      Date.now(),
      now(),
    );
    this.ledger.appendEvent(runId, "step_scheduled", path, { attempt, type: state.type });
    return { id, run: runId, path, attempt };
  }

  /** Ends a run and cancels whatever is still active in it. */
  #finishRun(run: RunRow, status: RunStatus, result: unknown, error: StepError | null): void {
    for (const a of this.ledger.activeAttempts(run.id)) this.#cancelAttempt(a);
    this.ledger.run(
      "UPDATE run_scopes SET status = 'canceled' WHERE run_id = ? AND status IN ('pending','running')",
      run.id,
    );
    const t = now();
    this.ledger.run(
      "UPDATE workflow_runs SET status = ?, result = ?, error = ?, updated_at = ?, completed_at = ? WHERE id = ?",
      status,
      status === "completed" ? JSON.stringify(result ?? null) : null,
      error ? JSON.stringify(error) : null,
      t,
      t,
      run.id,
    );
    this.ledger.appendEvent(run.id, `run_${status}`, null, status === "completed" ? { result } : { error });
    this.#ended.add(run.id);
    this.#definitions.delete(run.id);
  }

  /** Running when something runs or is queued, waiting when only waits remain (paused/terminal stay). */
  #refreshRunStatus(runId: string): void {
    const run = this.ledger.getRun(runId)!;
    if (!run.started_at || run.status === "paused" || TERMINAL_RUN.includes(run.status)) return;
    const counts = this.ledger.get<{ busy: number; waiting: number }>(
      `SELECT SUM(status IN ('scheduled','running')) AS busy, SUM(status = 'waiting') AS waiting
       FROM step_attempts WHERE run_id = ?`,
      runId,
    )!;
    const status: RunStatus = !counts.busy && counts.waiting > 0 ? "waiting" : "running";
    if (status !== run.status) {
      this.ledger.setRunStatus(runId, status);
      this.ledger.appendEvent(runId, "run_status", null, { status });
    }
  }

  // ---------------------------------------------------------------- timers and recovery

  #hasPendingTimer(attemptId: number): boolean {
    return !!this.ledger.get(
      "SELECT 1 FROM timers WHERE attempt_id = ? AND kind = 'retry' AND status = 'pending'",
      attemptId,
    );
  }

  /** Sets one in-process timeout for the earliest pending timer (at most 1s ahead, for other writers). */
  #armTimers(): void {
    if (this.#stopping) return;
    clearTimeout(this.#timer);
    const next = this.ledger.get<{ f: number | null }>(
      "SELECT MIN(fire_at) AS f FROM timers WHERE status = 'pending'",
    )!.f;
    const delay = next === null ? 1000 : Math.max(0, Math.min(1000, next - Date.now()));
    this.#timer = setTimeout(() => this.#track(this.#fireTimers()).finally(() => this.#armTimers()), delay);
  }

  async #fireTimers(): Promise<void> {
    const due = this.ledger.all<TimerRow>(
      "SELECT * FROM timers WHERE status = 'pending' AND fire_at <= ? ORDER BY fire_at LIMIT 100",
      Date.now(),
    );
    for (const t of due) {
      if (this.#stopping) return;
      await this.#fire(t);
    }
  }

  /** Fires one timer exactly once (the `pending → fired` update is the fence between processes). */
  async #fire(t: TimerRow): Promise<void> {
    const a = this.ledger.getAttempt(t.attempt_id)!;
    let prepared: Prepared | undefined;
    if (t.kind === "step_timeout") {
      const state = this.#stateOf(a);
      const messages = transaction(this.ledger.db, () => {
        if (
          this.ledger.run("UPDATE timers SET status = 'fired' WHERE id = ? AND status = 'pending'", t.id) ===
            0
        ) {
          return [];
        }
        const cur = this.ledger.getAttempt(a.id)!;
        const run = this.ledger.getRun(t.run_id)!;
        if (cur.status !== "waiting" || TERMINAL_RUN.includes(run.status)) return [];
        for (
          const child of this.ledger.all<ScopeRow>(
            "SELECT * FROM run_scopes WHERE parent_attempt = ? AND status IN ('pending','running')",
            a.id,
          )
        ) this.#cancelScope(run.id, child.scope);
        const out: StepMessage[] = [];
        const ms = this.#timeoutOf(run.id, state);
        this.#fail(run, cur, state, {
          code: "step_timeout",
          message: `step exceeded its timeout of ${ms}ms`,
          step: cur.path,
        }, out);
        this.#refreshRunStatus(run.id);
        return out;
      });
      this.#notify(t.run_id);
      await this.#publishAll(messages, this.ledger.getRun(t.run_id)?.traceparent ?? null);
      return;
    }
    if (t.kind !== "retry") {
      const state = this.#stateOf(a);
      let outcome: Outcome;
      if (t.kind === "timer") {
        outcome = {
          kind: "completed",
          output: { fired_at: now(), scheduled_for: new Date(t.fire_at).toISOString() },
        };
      } else {
        if (state.type !== "human_approval") return;
        const decision = {
          approved: false,
          timed_out: true,
          decided_by: null,
          comment: null,
          decided_at: now(),
        };
        outcome = state.onTimeout ? { kind: "completed", output: decision, next: state.onTimeout } : {
          kind: "failed",
          error: { code: "approval_timed_out", message: "no decision before the approval timed out" },
        };
      }
      prepared = await this.#prepare(a, state, outcome);
    }
    const messages = transaction(this.ledger.db, () => {
      if (
        this.ledger.run("UPDATE timers SET status = 'fired' WHERE id = ? AND status = 'pending'", t.id) === 0
      ) {
        return [];
      }
      const run = this.ledger.getRun(t.run_id)!;
      if (t.kind === "retry") {
        const cur = this.ledger.getAttempt(a.id)!;
        return cur.status === "scheduled" && run.status !== "paused" && !TERMINAL_RUN.includes(run.status)
          ? [toMessage(cur)]
          : [];
      }
      if (t.kind === "approval_timeout") {
        const changed = this.ledger.run(
          "UPDATE approvals SET status = 'timed_out', decided_at = ? WHERE attempt_id = ? AND status = 'pending'",
          now(),
          a.id,
        );
        if (changed === 0) return [];
        this.ledger.appendEvent(a.run_id, "approval_timed_out", a.path, {});
      } else {
        this.ledger.appendEvent(a.run_id, "timer_fired", a.path, {});
      }
      return this.#settle(a.id, "waiting", prepared!);
    });
    this.#notify(t.run_id);
    await this.#publishAll(messages, this.ledger.getRun(t.run_id)?.traceparent ?? null);
  }

  /**
   * Recovery (DESIGN §4): re-dispatch scheduled attempts whose message may be lost and running
   * attempts whose claim lapsed; on start, every scheduled attempt. Duplicates are fenced.
   */
  async #sweep(onStart: boolean): Promise<void> {
    if (this.#stopping) return;
    const t = Date.now();
    const lost = onStart ? t : t - Math.max(this.#opts.ackWaitMs * 2, 5000);
    const rows = this.ledger.all<AttemptRow & { traceparent: string | null }>(
      `SELECT a.*, r.traceparent FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE r.status NOT IN ('paused','completed','failed','canceled')
         AND ((a.status = 'scheduled' AND a.dispatched_at <= ?)
           OR (a.status = 'running' AND a.lease_until < ?))`,
      lost,
      t,
    );
    const due = rows.filter((a) => !this.#hasPendingTimer(a.id) && !this.#inflight.has(a.id));
    for (const a of due) {
      this.ledger.run("UPDATE step_attempts SET dispatched_at = ? WHERE id = ?", t, a.id);
      await this.#dispatch.publish(toMessage(a), a.traceparent);
    }
    if (onStart && due.length) log.info("engine recovered steps", { count: due.length });
  }

  // ---------------------------------------------------------------- helpers

  async #publishAll(messages: StepMessage[], traceparent: string | null): Promise<void> {
    await Promise.all(messages.map((m) => this.#dispatch.publish(m, traceparent)));
  }

  #notify(runId: string): void {
    for (const fn of this.#watchers.get(runId) ?? []) fn();
    // Only after the commit that ended it (a rolled-back transaction leaves the run active).
    if (this.#ended.delete(runId) && TERMINAL_RUN.includes(this.ledger.getRun(runId)!.status)) {
      for (const fn of this.#endHooks) {
        try {
          fn(runId);
        } catch (err) {
          log.warn("run-end hook failed", { run: runId, error: (err as Error).message });
        }
      }
    }
  }

  /**
   * Calls fn with the run id after a run ends (completed, failed or canceled) in this process —
   * for per-run resources such as a run's sandbox session. Returns the unsubscribe.
   */
  onRunEnd(fn: (runId: string) => void): () => void {
    this.#endHooks.add(fn);
    return () => this.#endHooks.delete(fn);
  }

  #abortRun(runId: string): void {
    for (const { run, abort } of this.#inflight.values()) {
      if (run === runId) abort.abort(new StationError("canceled", "run canceled"));
    }
  }

  #requireRun(runId: string): RunRow {
    const run = this.ledger.getRun(runId);
    if (!run) {
      throw new StationError("run_not_found", `no workflow run ${runId}`, {
        status: 404,
        hint: "list runs with `stn workflow runs`",
      });
    }
    return run;
  }

  #definition(runId: string): WorkflowDefinition {
    let def = this.#definitions.get(runId);
    if (!def) {
      def = JSON.parse(this.ledger.getRun(runId)!.definition) as WorkflowDefinition;
      this.#definitions.set(runId, def);
    }
    return def;
  }

  /** The block a scope runs: the workflow's states, or a branch / iterator / try block of its parent step. */
  #blockOf(runId: string, scope: ScopeRow): Block {
    if (scope.scope === "") return this.#definition(runId) as Block;
    const parent = this.ledger.getAttempt(scope.parent_attempt!)!;
    const state = this.#stateOf(parent);
    if (state.type === "parallel") return state.branches.find((b) => b.name === scope.key)!;
    if (state.type === "foreach") return state.iterator;
    if (state.type === "try") return state[scope.key as "try" | "catch" | "finally"]!;
    throw new Error(`scope ${scope.scope} has no block`);
  }

  /** The step's own timeout (state, then workflow defaults, then config); null for waits that have their own. */
  #timeoutOf(runId: string, state: State): number | null {
    if (state.type === "human_approval" || state.type === "timer") return null;
    const def = this.#definition(runId);
    return parseDuration(state.timeout ?? def.defaults?.timeout ?? "") ?? this.#opts.defaultTimeoutMs;
  }

  #stateOf(a: AttemptRow): State {
    const block = this.#blockOf(a.run_id, this.ledger.getScope(a.run_id, a.scope)!);
    return findState(block, a.step_id)!;
  }
}

interface Prepared {
  outcome: Outcome;
  state: State;
  /** The scope after a completed step's data flow. */
  context?: Scope;
}

function toMessage(a: AttemptRow): StepMessage {
  return { id: a.id, run: a.run_id, path: a.path, attempt: a.attempt };
}

function retryPolicy(state: State, def: WorkflowDefinition): RetryPolicy | undefined {
  return state.retry ?? def.defaults?.retry;
}

/** Exponential backoff with ±20% jitter, capped at max_interval. */
export function backoff(policy: RetryPolicy, attempt: number): number {
  const initial = parseDuration(policy.initial_interval) ?? 1000;
  const max = parseDuration(policy.max_interval) ?? 60_000;
  const base = Math.min(max, initial * policy.backoff_coefficient ** (attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
