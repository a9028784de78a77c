/**
 * WorkerAgents: runs agent loops on a `stn worker` — of `agent` steps, and of agent runs started on a task
 * queue it serves — each write committed by the station.
 */

import { hostname } from "node:os";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { ulid } from "ulid";
import type { AgentRunRow, ToolCallRow } from "../agents/ledger.ts";
import { runLoop } from "../agents/loop.ts";
import { type LoopLedger, type LoopTool, loopTool } from "../agents/loop_io.ts";
import { createModels, type Models } from "../agents/providers.ts";
import {
  AGENT_CANCEL_SUBJECT,
  AGENT_QUEUED_SUBJECT,
  AGENT_RELEASE_SUBJECT,
  AGENT_RENEW_SUBJECT,
  AGENT_START_SUBJECT,
  AGENT_TAKE_SUBJECT,
  AGENT_WRITE_SUBJECT,
  type AgentStartReply,
  type AgentTakeReply,
  type AgentWriteReply,
  type Claim,
  type RunClaim,
  type StepClaim,
  type WRITES,
} from "../agents/remote_protocol.ts";
import { runSignal } from "../agents/run_signal.ts";
import { sandboxToolbox } from "../agents/sandbox_tools.ts";
import type { Toolbox } from "../agents/types.ts";
import type { Config } from "../config/schema.ts";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import { type McpPool, type McpToolboxPlan, openPlannedToolbox } from "../mcp/mod.ts";
import type { SandboxService } from "../sandbox/service.ts";
import type { AgentRunner } from "../workflows/steps/runners.ts";
import { ModelThrottle } from "../agents/throttle.ts";
import { RemotePermits } from "./model_permits.ts";
import { stationRequest } from "./station_request.ts";

/** What a worker's agent steps need. */
export interface WorkerAgentsOptions {
  nc: NatsConnection;
  /** Named in errors: the machine an MCP server could not start on. */
  machine: string;
  /** The worker's own `ai` (models, keys from its environment) and `agents` settings. */
  config: Pick<Config, "ai" | "agents">;
  env: Record<string, string | undefined>;
  /** The worker's MCP servers, shared across its agent runs. */
  pool: McpPool;
  /** The worker's Docker, for agents with `sandbox:`. */
  sandbox?: SandboxService;
}

type Started = Exclude<AgentStartReply, { error: unknown }>;
type Taken = Exclude<AgentTakeReply, { error: unknown }>;

/**
 * Runs agent loops on a worker (docs/workers.md#agent-steps): the station creates or finds the run of a step
 * (or hands over a run queued on the worker's queues, under a claim of its own) with its stored turns and its
 * checked MCP launches; the loop, its model calls, MCP servers and sandboxes run here, and each turn, tool call
 * and end is sent to the station and committed there before the loop moves on — a worker killed mid-run
 * leaves the next one to replay them, not repeat them.
 */
export class WorkerAgents {
  #o: WorkerAgentsOptions;
  #models: Models;
  /** The queued runs running here, by run id. */
  #runs = new Map<string, { claim: RunClaim; abort: AbortController }>();
  #subs: Subscription[] = [];
  #queued: (() => void)[] = [];

  constructor(o: WorkerAgentsOptions) {
    this.#o = o;
    this.#models = createModels(o.config.ai, o.env);
  }

  /** Listens for queued runs (to ask for them at once) and for cancels of the runs running here. */
  start(): void {
    const { nc } = this.#o;
    this.#subs.push(
      nc.subscribe(AGENT_QUEUED_SUBJECT, {
        callback: () => this.#queued.splice(0).forEach((wake) => wake()),
      }),
      nc.subscribe(`${AGENT_CANCEL_SUBJECT}.*`, {
        callback: (_err, msg) =>
          this.#runs.get(msg.subject.slice(AGENT_CANCEL_SUBJECT.length + 1))?.abort.abort(
            new StationError("canceled", "agent run canceled"),
          ),
      }),
    );
  }

  /** Resolves when a run is queued somewhere, or after `ms` (a lapsed claim is noticed by asking). */
  nextQueued(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#queued.push(done);
    });
  }

  /**
   * Asks the station for a run queued on `queues` (docs/workers.md#agent-runs-on-a-queue) and starts its loop;
   * answers its end, or undefined when none waits. A lost answer leaves the run to lapse to another worker.
   */
  async take(
    who: { worker: string; name: string },
    queues: string[],
  ): Promise<{ ended: Promise<void> } | undefined> {
    const taken = await stationRequest<Taken>(this.#o.nc, AGENT_TAKE_SUBJECT, { ...who, queues }, {
      retries: 0,
    });
    if ("none" in taken) return undefined;
    const { claim } = taken;
    const abort = new AbortController();
    this.#runs.set(claim.run_id, { claim, abort });
    log.info("agent run taken from its queue", { run: claim.run_id, queue: taken.run.queue });
    const ended = this.#loop(claim, taken, abort.signal).then(
      () => {},
      (err) => log.warn("agent run stopped here", { run: claim.run_id, error: errorMessage(err) }),
    ).finally(() => this.#runs.delete(claim.run_id));
    return { ended };
  }

  /** Renews the leases of the queued runs running here (each heartbeat). */
  renew(): void {
    const claims = [...this.#runs.values()].map((r) => r.claim);
    if (claims.length > 0) this.#o.nc.publish(AGENT_RENEW_SUBJECT, JSON.stringify({ claims }));
  }

  /** Stops the queued runs running here and hands them back, so another worker takes them over at once. */
  async handBack(): Promise<void> {
    for (const s of this.#subs) s.unsubscribe();
    const left = [...this.#runs.values()];
    if (left.length === 0) return;
    for (const r of left) r.abort.abort(new StationError("shutdown", "worker draining"));
    await stationRequest(this.#o.nc, AGENT_RELEASE_SUBJECT, { claims: left.map((r) => r.claim) }, {
      retries: 0,
    })
      .catch((err) => log.warn("handing back agent runs failed", { error: errorMessage(err) }));
  }

  /** The AgentRunner of one step attempt this worker holds the claim of. */
  forStep(claim: StepClaim): AgentRunner {
    const calls = new Map<string, ToolCallRow[]>();
    return {
      // Empty: the station fills in its `workflows.environment`.
      environment: "",
      ledger: { toolCalls: (runId) => calls.get(runId) ?? [] },
      run: (req) => this.#run(claim, req, calls),
    };
  }

  async #run(
    claim: StepClaim,
    req: Parameters<AgentRunner["run"]>[0],
    calls: Map<string, ToolCallRow[]>,
  ): Promise<AgentRunRow> {
    const started = await stationRequest<Started>(this.#o.nc, AGENT_START_SUBJECT, {
      claim,
      agent: req.agent,
      environment: req.environment,
      task: req.task,
      variables: req.variables ?? {},
    });
    calls.set(started.run.id, started.tool_calls);
    if (started.run.status !== "running") return started.run;
    return (await this.#loop(claim, started, req.signal)).ended(calls);
  }

  /** Runs a run's loop here under `claim`; its ledger once the run has ended (a shutdown throws). */
  async #loop(claim: Claim, started: Started, outer: AbortSignal | undefined): Promise<RemoteLedger> {
    const { run, plan } = started;
    const ledger = new RemoteLedger(this.#o.nc, claim, started);
    const { abort, dispose } = runSignal(plan.timeout_ms, outer);
    const boxes: Toolbox[] = [];
    try {
      let tools: LoopTool[];
      try {
        tools = await this.#tools(started, abort.signal, boxes);
      } catch (err) {
        const e = err instanceof StationError ? err : undefined;
        await ledger.finish(run.id, {
          status: abort.signal.aborted ? "canceled" : "failed",
          finish_reason: abort.signal.aborted ? "canceled" : "error",
          response: "",
          error: { code: e?.code ?? "agent_tools_unavailable", message: errorMessage(err) },
        });
        return ledger;
      }
      const ended = await runLoop(run, plan, {
        ledger,
        model: this.#models.resolve(run.model).model,
        tools,
        signal: abort.signal,
        maxToolOutput: this.#o.config.agents.max_tool_output,
        debug: false,
        // The station's `ai.limits` decide, cluster-wide: this worker asks it before each model call.
        throttle: new ModelThrottle(
          new RemotePermits({ nc: this.#o.nc, claim, limited: started.limited, signal: abort.signal }),
        ),
      });
      if (!ended) throw new StationError("shutdown", "worker stopping: the run resumes where it goes next");
      return ledger;
    } finally {
      dispose();
      for (const b of boxes) {
        await b.close().catch((err) => log.warn("closing agent tools", { error: errorMessage(err) }));
      }
    }
  }

  /** The run's MCP tools (started here from the station's checked launches) and sandbox tools (this Docker). */
  async #tools(started: Started, signal: AbortSignal, boxes: Toolbox[]): Promise<LoopTool[]> {
    const { def, run } = started;
    if (started.mcp) {
      try {
        boxes.push(await openPlannedToolbox(started.mcp as McpToolboxPlan, { signal, pool: this.#o.pool }));
      } catch (err) {
        throw new StationError(
          (err as StationError).code ?? "agent_tools_unavailable",
          `on worker ${this.#o.machine} (host ${hostname()}): ${errorMessage(err)}`,
          { hint: "install the MCP server's command on the worker's machine, or serve the queue elsewhere" },
        );
      }
    }
    if (def.sandbox) {
      if (!this.#o.sandbox) {
        throw new StationError(
          "agent_tools_unavailable",
          `agent ${def.name} needs a sandbox, and worker ${this.#o.machine} has none`,
          { hint: "start Docker on the worker's machine (sandbox.enabled in its config)" },
        );
      }
      boxes.push(sandboxToolbox(this.#o.sandbox, def.sandbox, run.workflow_run_id ?? undefined));
    }
    return boxes.flatMap((b) => b.tools.map(loopTool));
  }
}

/** The loop's ledger on a worker: reads what the station handed over, writes through the station. */
class RemoteLedger implements LoopLedger {
  #nc: NatsConnection;
  #claim: Claim;
  #started: Started;
  #end?: { run: AgentRunRow; tool_calls: ToolCallRow[] };

  constructor(nc: NatsConnection, claim: Claim, started: Started) {
    this.#nc = nc;
    this.#claim = claim;
    this.#started = started;
  }

  turns = () => this.#started.turns;
  toolCalls = () => this.#started.tool_calls;
  get = () => this.#end?.run ?? this.#started.run;

  /** The ended run, with its tool calls noted for the step's output. */
  ended(calls: Map<string, ToolCallRow[]>): AgentRunRow {
    if (this.#end) calls.set(this.#end.run.id, this.#end.tool_calls);
    return this.get();
  }

  event = (...args: unknown[]) => this.#write("event", args);
  turnCompleted = (...args: unknown[]) => this.#write("turnCompleted", args);
  contextCompacted = (...args: unknown[]) => this.#write("contextCompacted", args);
  toolStarted = (...args: unknown[]) => this.#write("toolStarted", args);
  toolFinished = (...args: unknown[]) => this.#write("toolFinished", args);
  finish = (...args: unknown[]) => this.#write("finish", args);

  async #write(op: typeof WRITES[number], args: unknown[]): Promise<void> {
    const reply = await stationRequest<Exclude<AgentWriteReply, { error: unknown }>>(
      this.#nc,
      AGENT_WRITE_SUBJECT,
      {
        claim: this.#claim,
        // One id for all its sends: a write re-sent after a lost answer is applied once.
        write_id: ulid(),
        run_id: this.#started.run.id,
        op,
        args,
      },
    );
    if (reply.run) this.#end = { run: reply.run, tool_calls: reply.tool_calls ?? [] };
  }
}
