/** AgentHost: the station's side of agent steps run by `stn worker`s (start the run, commit its writes). */

import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { z } from "zod";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import {
  AGENT_MODEL_SUBJECT,
  AGENT_START_SUBJECT,
  AGENT_WRITE_SUBJECT,
  type AgentStartReply,
  AgentStartRequest,
  type AgentWriteReply,
  AgentWriteRequest,
  type ModelPermitReply,
  ModelPermitRequest,
  type StepClaim,
} from "./remote_protocol.ts";
import type { AgentService } from "./service.ts";
import type { AgentDefinition } from "./types.ts";

/** What the host needs besides the agent service. */
export interface AgentHostOptions {
  nc: NatsConnection;
  agents: AgentService;
  /** Whether the worker holds the claim of exactly this step attempt (the engine's fencing). */
  holds(claim: StepClaim): boolean;
  /** The checked, rendered MCP plan of an agent's tools, for a worker to start (mcp/toolbox.ts). */
  mcpPlan(environment: string, def: AgentDefinition): Promise<unknown>;
  /** Resolves once the ledger's commits so far are on disk (`ledger.durability`): awaited before each answer. */
  durable?: () => Promise<void>;
}

/**
 * The station's side of remote agent steps (docs/workers.md#agent-steps): creates or finds a step's agent
 * run for the worker that holds the step's claim, and commits each write of its loop before answering,
 * refusing writes from a worker whose claim lapsed (another took the step over).
 */
export class AgentHost {
  #o: AgentHostOptions;
  #subs: Subscription[] = [];

  constructor(o: AgentHostOptions) {
    this.#o = o;
  }

  /** Starts answering workers. */
  start(): void {
    const serve = <T>(subject: string, handle: (body: unknown) => Promise<T> | T) =>
      this.#subs.push(this.#o.nc.subscribe(subject, {
        callback: (_err, msg) => void this.#answer(msg, handle),
      }));
    serve(AGENT_START_SUBJECT, (b) => this.#start(AgentStartRequest.parse(b)));
    serve(AGENT_WRITE_SUBJECT, (b) => this.#write(AgentWriteRequest.parse(b)));
    serve(AGENT_MODEL_SUBJECT, (b) => this.#model(ModelPermitRequest.parse(b)));
  }

  /** Stops answering (workers retry until a station answers). */
  stop(): void {
    for (const s of this.#subs) s.unsubscribe();
    this.#subs = [];
  }

  async #answer<T>(msg: Msg, handle: (body: unknown) => Promise<T> | T): Promise<void> {
    let reply: unknown;
    try {
      reply = await handle(msg.json());
      // A worker moves on (calls the model, runs the tool) once answered: what it follows from is synced first.
      await this.#o.durable?.();
    } catch (err) {
      log.warn("agent step request refused", { subject: msg.subject, error: errorMessage(err) });
      // A StationError's own code (claim_lost, agent_not_found, …); a malformed request is invalid_request.
      const code = err instanceof StationError ? err.code : "invalid_request";
      reply = { error: { code, message: errorMessage(err) } };
    }
    msg.respond(JSON.stringify(reply));
  }

  async #start(req: AgentStartRequest): Promise<AgentStartReply> {
    const { agents } = this.#o;
    this.#fence(req.claim);
    const { claim } = req;
    const { run, plan, def } = await agents.forWorker({
      agent: req.agent,
      environment: req.environment || agents.environment,
      task: req.task,
      variables: req.variables,
      step: { runId: claim.run, path: claim.path, visit: claim.visit, attempt: claim.attempt },
    });
    const running = run.status === "running";
    return {
      run,
      plan,
      def,
      turns: agents.ledger.turns(run.id),
      tool_calls: agents.ledger.toolCalls(run.id),
      mcp: running && def.tools.length > 0 ? await this.#o.mcpPlan(run.environment, def) : null,
      limited: agents.limits.limited(run.model),
    };
  }

  #write(req: AgentWriteRequest): AgentWriteReply {
    const { ledger } = this.#o.agents;
    this.#fence(req.claim);
    const run = ledger.get(req.run_id);
    const { claim } = req;
    if (
      !run || run.workflow_run_id !== claim.run || run.step_path !== claim.path ||
      run.step_attempt !== claim.attempt
    ) {
      throw new StationError("agent_run_not_found", `agent run ${req.run_id} is not step ${claim.path}'s`);
    }
    // A worker re-sends a write whose answer it lost: a turn already recorded is not recorded twice.
    const turn = req.op === "turnCompleted" ? (req.args[0] as { turn?: number }).turn : undefined;
    const again = turn !== undefined && ledger.turns(run.id).some((t) => t.turn === turn);
    if (!again) (ledger[req.op] as (...a: unknown[]) => unknown).apply(ledger, req.args);
    if (req.op !== "finish") return { ok: true };
    return { ok: true, run: ledger.get(run.id), tool_calls: ledger.toolCalls(run.id) };
  }

  /** A worker's model call under `ai.limits`, decided on the ledger like the station's own calls. */
  #model(req: z.output<typeof ModelPermitRequest>): ModelPermitReply {
    const { limits } = this.#o.agents;
    switch (req.op) {
      case "acquire":
        // Only the worker holding the step calls its model; the one it was taken from is refused.
        this.#fence(req.claim);
        return { wait: limits.acquire(req.id, req.model) };
      case "renew":
        limits.renew(req.id);
        return {};
      case "release":
        limits.release(req.id, req.tokens);
        return {};
      case "block":
        return { keys: limits.block(req.model, req.wait_ms) };
    }
  }

  #fence(claim: StepClaim): void {
    if (!this.#o.holds(claim)) {
      throw new StationError(
        "claim_lost",
        `worker ${claim.worker} no longer holds step ${claim.path} of run ${claim.run}`,
      );
    }
  }
}
