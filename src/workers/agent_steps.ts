/** WorkerAgents: runs the loop of `agent` steps on a `stn worker`, each write committed by the station. */

import { hostname } from "node:os";
import type { NatsConnection } from "@nats-io/transport-node";
import type { AgentRunRow, ToolCallRow } from "../agents/ledger.ts";
import { runLoop } from "../agents/loop.ts";
import { type LoopLedger, type LoopTool, loopTool } from "../agents/loop_io.ts";
import { createModels, type Models } from "../agents/providers.ts";
import {
  AGENT_START_SUBJECT,
  AGENT_WRITE_SUBJECT,
  type AgentStartReply,
  type AgentWriteReply,
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

/**
 * Runs `agent` steps on a worker (docs/workers.md#agent-steps): the station creates or finds the step's run
 * and hands over its stored turns and its checked MCP launches; the loop, its model calls, MCP servers and
 * sandboxes run here, and each turn, tool call and end is sent to the station and committed there before
 * the loop moves on — a worker killed mid-run leaves the next one to replay them, not repeat them.
 */
export class WorkerAgents {
  #o: WorkerAgentsOptions;
  #models: Models;

  constructor(o: WorkerAgentsOptions) {
    this.#o = o;
    this.#models = createModels(o.config.ai, o.env);
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
    const { run, plan } = started;
    calls.set(run.id, started.tool_calls);
    if (run.status !== "running") return run;
    const ledger = new RemoteLedger(this.#o.nc, claim, started);
    const { abort, dispose } = runSignal(plan.timeout_ms, req.signal);
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
        return ledger.ended(calls);
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
      if (!ended) {
        throw new StationError("shutdown", "worker stopping: the run resumes where the step goes next");
      }
      return ledger.ended(calls);
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
  #claim: StepClaim;
  #started: Started;
  #end?: { run: AgentRunRow; tool_calls: ToolCallRow[] };

  constructor(nc: NatsConnection, claim: StepClaim, started: Started) {
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
        run_id: this.#started.run.id,
        op,
        args,
      },
    );
    if (reply.run) this.#end = { run: reply.run, tool_calls: reply.tool_calls ?? [] };
  }
}
