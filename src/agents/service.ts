/** AgentService: the one entry every caller uses to run agents, check them first, and resume crashed runs. */

import type { Config } from "../config/schema.ts";
import type { Database } from "../db/database.ts";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import { traceAgentRun } from "../telemetry/agents.ts";
import { currentTraceId } from "../telemetry/tracing.ts";
import type { SandboxService } from "../sandbox/service.ts";
import { type Clock, systemClock } from "../lib/clock.ts";
import { AgentLedger, type AgentRunRow } from "./ledger.ts";
import { runEnded } from "./run_rows.ts";
import { agentAdmission } from "./admission.ts";
import { untilEnded, WaitingRuns } from "./waiting.ts";
import { queueOf } from "./run_queue.ts";
import type { AgentRunRequest, StartedRun } from "./run_request.ts";
import { contextPlan } from "./context.ts";
import { runLoop, type RunPlan } from "./loop.ts";
import type { LoopTool } from "./loop_io.ts";
import { createModels, type Models } from "./providers.ts";
import { ModelLimits } from "./model_limits.ts";
import { ModelThrottle } from "./throttle.ts";
import { renderAgentPrompt } from "./render.ts";
import { outerReason, runSignal } from "./run_signal.ts";
import { lowestBudget, priceOf } from "../telemetry/cost.ts";
import type { AgentDefinition, AgentTool, Toolbox } from "./types.ts";
import { childAgentTool } from "./child_tool.ts";
import { runTools } from "./run_tools.ts";
import { DoublesRegistry, runIdentity } from "./doubles.ts";

/** Finds an agent's definition (injected: the agents table filled by `stn sync`). */
export type AgentSource = (environment: string, name: string) => AgentDefinition | undefined;
/** Opens the MCP tools an agent lists (injected: the MCP client), closed when the run ends. */
export type McpTools = (environment: string, def: AgentDefinition, signal: AbortSignal) => Promise<Toolbox>;

export interface AgentServiceOptions {
  db: Database;
  config: Pick<Config, "ai" | "agents">;
  /** The process environment (API keys). */
  env: Record<string, string | undefined>;
  source: AgentSource;
  mcpTools: McpTools;
  /** The MCP tools an agent lists as synced, unconnected: doubled runs start servers only for live calls. */
  mcpToolSpecs?: (environment: string, def: AgentDefinition) => Omit<AgentTool, "call">[];
  sandbox?: SandboxService;
  /** log.agent_turns (STATION_DEBUG=true): each turn logged to stderr. */
  debug?: boolean;
  /** The environment of an agent named without one (`workflows.environment`). */
  environment?: string;
  /** Stamps runs and their events: the engine's clock (a virtual one in tests); default the wall clock. */
  clock?: Clock;
  /** Resolves once the ledger's commits so far are on disk (`ledger.durability`): awaited before each turn. */
  durable?: () => Promise<void>;
  /** Runs on task queues: tells workers one was queued, and the one running a canceled run. */
  remote?: { queued(run: AgentRunRow): void; canceled(runId: string): void };
}

/**
 * The one entry every caller uses to run agents (CLI, API, workflow step, schedules, parent agents): checks the
 * agent, its model's key and its input BEFORE a run exists, records the run, gathers its tools (MCP, sandbox,
 * child agents), runs THE loop under its timeout and cancel signal, and resumes the runs a crash left `running`.
 */
export class AgentService {
  readonly ledger: AgentLedger;
  #o: AgentServiceOptions;
  #models: Models;
  /** `ai.limits` permits: the station's model calls and (over NATS) its workers'. */
  readonly limits: ModelLimits;
  #active = new Map<string, { abort: AbortController; done: Promise<AgentRunRow> }>();
  #waiting = new WaitingRuns();
  #stopping = false;
  /** The environment of an agent named without one. */
  readonly environment: string;
  /** Test doubles by run id (agents/doubles.ts): empty outside tests and recordings. */
  readonly doubles = new DoublesRegistry();

  constructor(o: AgentServiceOptions) {
    this.#o = o;
    this.ledger = new AgentLedger(o.db, o.clock);
    this.limits = new ModelLimits(o.db, o.config.ai.limits, o.clock);
    this.#models = createModels(o.config.ai, o.env);
    this.environment = o.environment ?? "default";
    this.ledger.onAdmitted = (ids) => this.#admitted(ids);
  }

  /** Starts a run; a step attempt or parent tool call that already started one gets that run back. */
  async start(req: AgentRunRequest): Promise<StartedRun> {
    const existing = req.step
      ? this.ledger.byStepAttempt(req.step)
      : req.parent
      ? this.ledger.byParentCall(req.parent.runId, req.parent.callId)
      : undefined;
    if (existing) return { run: existing, done: this.#rejoin(existing, req.signal) };
    const { run, plan, def, replayed } = await this.#create(req);
    // A replay waits for the run wherever it runs, never starts it twice; a queued one waits for its worker.
    if (replayed || run.queue !== null) {
      if (!replayed && run.status === "running") this.#o.remote?.queued(run);
      return { run, done: this.wait(run.id, req.signal) };
    }
    const unregister = req.doubles && this.doubles.register(run.id, req.doubles);
    const done = run.status === "waiting_for_concurrency"
      ? this.#queued(run, req.signal, (row) => this.#launch(row, plan, def, req.signal))
      : this.#launch(run, plan, def, req.signal);
    if (unregister) done.then(unregister, unregister);
    return { run, done };
  }

  /** A step attempt's run for a `stn worker` to run (docs/workers.md#agent-steps): created or found, not launched. */
  async forWorker(req: AgentRunRequest): Promise<{ run: AgentRunRow; plan: RunPlan; def: AgentDefinition }> {
    const run = this.ledger.byStepAttempt(req.step!);
    if (!run) return await this.#create(req);
    if (run.status === "running") return { run, ...this.#resume(run) };
    return { run, plan: JSON.parse(run.plan), def: this.#definition(run.environment, run.agent) };
  }

  /** A run taken from a task queue for a worker: its plan (what is left of its timeout on a resume) and agent. */
  forQueued(run: AgentRunRow): { plan: RunPlan; def: AgentDefinition } {
    const def = this.#definition(run.environment, run.agent);
    return run.claims > 1 ? this.#resume(run) : { plan: JSON.parse(run.plan), def };
  }

  /**
   * Whether a step's agent must run here, not on a worker: child agents, concurrency keys (a run waits for its
   * keys here), test doubles or an unknown agent.
   */
  stationOnly(agent: string, environment: string, workflowRunId: string): boolean {
    const def = this.#o.source(environment || this.environment, agent);
    return !def || def.agents.length > 0 || def.concurrency !== undefined ||
      this.doubles.find([workflowRunId]) !== undefined;
  }

  async #create(req: AgentRunRequest) {
    const def = this.#definition(req.environment, req.agent);
    const model = (this.doubles.forRequest(this.ledger, req)?.models ?? this.#models).resolve(
      req.model ?? def.model,
    );
    const queue = queueOf(req, def);
    const variables = req.variables ?? {};
    const prompt = await renderAgentPrompt(def, req.task, variables);
    const plan: RunPlan = {
      ...prompt,
      max_steps: def.max_steps,
      output_schema: def.output_schema,
      timeout_ms: def.timeout_ms ?? this.#o.config.agents.timeout,
      context: contextPlan(def.context, this.#o.config.agents.context, model.id),
      price: priceOf(model.id, this.#o.config.ai.prices),
      max_cost: lowestBudget(def.max_cost, req.maxCost),
    };
    const admission = await agentAdmission(def, { task: req.task, variables }, req.priority);
    let replayed = false;
    const run = this.ledger.create({
      admission,
      agent: def.name,
      environment: req.environment,
      model: model.id,
      task: req.task,
      variables,
      plan,
      parentRunId: req.parent?.runId,
      parentCallId: req.parent?.callId,
      step: req.step,
      traceId: req.traceId ?? currentTraceId(),
      trigger: req.trigger,
      priced: plan.price !== undefined,
      queue,
      claim: req.claim && ((id) => {
        const found = req.claim!(id);
        replayed = found !== undefined;
        return found;
      }),
    });
    return { run, plan, def, replayed };
  }

  /** Starts a run and waits for its end. */
  async run(req: AgentRunRequest): Promise<AgentRunRow> {
    return await (await this.start(req)).done;
  }

  /** The end of a run: at once when it has ended, else when it does (wherever it runs). */
  async wait(runId: string, signal?: AbortSignal): Promise<AgentRunRow> {
    const active = this.#active.get(runId);
    if (active) return await active.done;
    return await untilEnded(this.ledger, runId, signal);
  }

  /** Why agent runs keep this process busy (some run here), else null: quiescence in tests. */
  busy = (): string | null => this.#active.size ? `${this.#active.size} agent run(s) running` : null;

  /** Cancels a running run: its model call and running tool are aborted. */
  cancel(runId: string, reason = "canceled by request"): AgentRunRow {
    const row = this.ledger.get(runId);
    if (!row) throw new StationError("agent_run_not_found", `no agent run ${runId}`);
    if (runEnded(row.status)) {
      throw new StationError("agent_run_finished", `agent run ${runId} has already ended (${row.status})`);
    }
    const active = this.#active.get(runId);
    if (active) active.abort.abort(new StationError("canceled", reason));
    else this.#endIdle(runId, new StationError("canceled", reason));
    // A worker running it aborts its model call and tool (its writes are refused from now on anyway).
    if (!active && row.owner !== null) this.#o.remote?.canceled(runId);
    return this.ledger.get(runId)!;
  }

  /**
   * Ends a run nobody here runs (waiting for its keys, or left by a crash): canceled, or failed on a timeout. A
   * waiting run gives back its place in the queue (it held no key) and its caller here hears it ended.
   */
  #endIdle(runId: string, why: StationError): void {
    const error = { code: why.code, message: why.message };
    const timeout = why.code === "agent_timeout";
    this.ledger.finish(runId, {
      status: timeout ? "failed" : "canceled",
      finish_reason: timeout ? "timeout" : "canceled",
      response: "",
      error,
    });
    this.#waiting.wake([runId]);
  }

  /**
   * Resumes the top-level runs a crash left `running`, from their last checkpoint, and admits the waiting
   * runs that fit now (the others keep waiting: admitted as runs end).
   */
  resumeOrphans(): void {
    for (const run of this.ledger.orphans()) {
      if (this.#active.has(run.id)) continue;
      this.#resumeLogged(run);
    }
    this.ledger.admitWaiting();
  }

  #resumeLogged(run: AgentRunRow): void {
    this.#rejoin(run).catch((err) =>
      log.error("resuming an agent run failed", { run: run.id, error: errorMessage(err) })
    );
  }

  /**
   * Runs the ledger just admitted: woken where this process waits for them; a top-level one nobody here waits
   * for (it waited across a restart) is run here, or, on a task queue, offered to the workers. A step's or
   * child's run is run by its step or parent.
   */
  #admitted(runIds: string[]): void {
    for (const id of this.#waiting.wake(runIds)) {
      const run = this.ledger.get(id);
      if (!run || this.#stopping) continue;
      // A run on a task queue, admitted: now a worker serving it may take it (docs/agents.md#concurrency).
      if (run.queue !== null) this.#o.remote?.queued(run);
      else if (!run.parent_run_id && !run.workflow_run_id) this.#resumeLogged(run);
    }
  }

  /** A run waiting for its concurrency keys: `launch`ed here once admitted; its row when it ended waiting. */
  async #queued(
    run: AgentRunRow,
    signal: AbortSignal | undefined,
    launch: (row: AgentRunRow) => Promise<AgentRunRow>,
  ): Promise<AgentRunRow> {
    // The caller's abort: a shutdown leaves the run waiting (for the next start), a step timeout or cancel ends it.
    const onAbort = () => {
      const why = outerReason(signal!.reason);
      if (why.code === "shutdown") this.#waiting.wake([run.id]);
      else if (this.ledger.get(run.id)?.status === "waiting_for_concurrency") this.#endIdle(run.id, why);
    };
    await this.#waiting.until(run.id, () => this.ledger.get(run.id)?.status, { signal, onAbort });
    const active = this.#active.get(run.id);
    if (active) return await active.done;
    const row = this.ledger.get(run.id)!;
    return row.status === "running" && !this.#stopping ? await launch(row) : row;
  }

  /** Stops every run of this process without ending it in the ledger: they resume at the next start. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#waiting.wakeAll();
    for (const { abort } of this.#active.values()) {
      abort.abort(new StationError("shutdown", "station stopping"));
    }
    await Promise.allSettled([...this.#active.values()].map((a) => a.done));
  }

  #definition(environment: string, name: string): AgentDefinition {
    const def = this.#o.source(environment, name);
    if (!def) {
      throw new StationError("agent_not_found", `no agent ${name} in environment ${environment}`, {
        hint:
          `add environments/${environment}/agents/${name}.prompt and run \`stn sync\`; \`stn agent list\` shows the agents`,
      });
    }
    return def;
  }

  /** A run that exists already: its end, resuming it here when no one runs it. */
  #rejoin(run: AgentRunRow, signal?: AbortSignal): Promise<AgentRunRow> {
    const active = this.#active.get(run.id);
    if (active) return active.done;
    if (run.status === "waiting_for_concurrency") {
      return this.#queued(run, signal, (row) => this.#rejoin(row, signal));
    }
    if (run.status !== "running") return Promise.resolve(run);
    try {
      const { plan, def } = this.#resume(run);
      return this.#launch(run, plan, def, signal);
    } catch (err) {
      const e = err as StationError;
      const error = { code: e.code, message: e.message };
      this.ledger.finish(run.id, { status: "failed", finish_reason: "error", response: "", error });
      return Promise.resolve(this.ledger.get(run.id)!);
    }
  }

  /** A running run's plan with what is left of its timeout, and its definition; records `run_resumed`. */
  #resume(run: AgentRunRow): { plan: RunPlan; def: AgentDefinition } {
    const plan = JSON.parse(run.plan) as RunPlan;
    const def = this.#definition(run.environment, run.agent);
    this.ledger.event(run.id, "run_resumed", { turns: run.turns });
    const elapsed = (this.#o.clock ?? systemClock).now() - Date.parse(run.started_at);
    return { plan: { ...plan, timeout_ms: Math.max(1000, plan.timeout_ms - elapsed) }, def };
  }

  #launch(run: AgentRunRow, plan: RunPlan, def: AgentDefinition, outer?: AbortSignal): Promise<AgentRunRow> {
    const { abort, dispose } = runSignal(plan.timeout_ms, outer);
    if (this.#stopping) abort.abort(new StationError("shutdown", "station stopping"));
    // The run's span: a child of the active one (the step attempt, the parent's tool call, the API request).
    const done = traceAgentRun(run, async () => {
      let toolbox: { tools: LoopTool[]; close(): Promise<void> } | undefined;
      try {
        const doubles = this.doubles.forRun(this.ledger, run);
        const who = doubles && runIdentity(this.ledger, run);
        const children = def.agents.map((name) =>
          childAgentTool(
            { ledger: this.ledger, run: (r) => this.run(r) },
            run,
            this.#definition(run.environment, name),
          )
        );
        toolbox = await runTools(
          this.#o,
          { run, def, children, signal: abort.signal },
          doubles && { doubles, who: who! },
        );
        let model = (doubles?.models ?? this.#models).resolve(run.model, who);
        if (doubles?.record) model = doubles.record.model(who!, model);
        const ended = await runLoop(run, plan, {
          ledger: this.ledger,
          model: model.model,
          tools: toolbox.tools,
          signal: abort.signal,
          maxToolOutput: this.#o.config.agents.max_tool_output,
          debug: this.#o.debug ?? false,
          throttle: new ModelThrottle(this.limits),
          durable: this.#o.durable,
        });
        return ended ?? this.ledger.get(run.id)!;
      } catch (err) {
        // Tools that cannot be opened, a model that cannot be resolved any more: the run fails, recorded.
        const e = err instanceof StationError ? err : undefined;
        if (abort.signal.reason instanceof StationError && abort.signal.reason.code === "shutdown") {
          return this.ledger.get(run.id)!;
        }
        this.ledger.finish(run.id, {
          status: abort.signal.aborted ? "canceled" : "failed",
          finish_reason: abort.signal.aborted ? "canceled" : "error",
          response: "",
          error: { code: e?.code ?? "agent_tools_unavailable", message: errorMessage(err) },
        });
        return this.ledger.get(run.id)!;
      } finally {
        dispose();
        await toolbox?.close().catch((err) =>
          log.warn("closing an agent's tools failed", { run: run.id, error: errorMessage(err) })
        );
        this.#active.delete(run.id);
      }
    });
    this.#active.set(run.id, { abort, done });
    return done;
  }
}
