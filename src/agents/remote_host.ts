/** AgentHost: the station's side of agent loops run by `stn worker`s (start or take the run, commit its writes). */

import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { z } from "zod";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import type { AgentRunRow } from "./ledger.ts";
import type { RunPlan } from "./loop.ts";
import {
  AGENT_MODEL_RELEASED_SUBJECT,
  AGENT_MODEL_SUBJECT,
  AGENT_QUEUED_SUBJECT,
  AGENT_RELEASE_SUBJECT,
  AGENT_RENEW_SUBJECT,
  AGENT_START_SUBJECT,
  AGENT_TAKE_SUBJECT,
  AGENT_WRITE_SUBJECT,
  AgentClaimsRequest,
  type AgentStartReply,
  AgentStartRequest,
  type AgentTakeReply,
  AgentTakeRequest,
  type AgentWriteReply,
  AgentWriteRequest,
  type Claim,
  type ModelPermitReply,
  ModelPermitRequest,
  type StepClaim,
} from "./remote_protocol.ts";
import type { RunClaims } from "./run_claims.ts";
import type { AgentService } from "./service.ts";
import type { AgentDefinition } from "./types.ts";

/** What the host needs besides the agent service. */
export interface AgentHostOptions {
  nc: NatsConnection;
  agents: AgentService;
  /** The claims of runs started on a task queue. */
  claims: RunClaims;
  /** How long a worker's claim of a queued run lasts without a heartbeat (`engine.lease`). */
  leaseMs: number;
  /** Whether the worker holds the claim of exactly this step attempt (the engine's fencing). */
  holds(claim: StepClaim): boolean;
  /** The checked, rendered MCP plan of an agent's tools, for a worker to start (mcp/toolbox.ts). */
  mcpPlan(environment: string, def: AgentDefinition): Promise<unknown>;
  /** Resolves once the ledger's commits so far are on disk (`ledger.durability`): awaited before each answer. */
  durable?: () => Promise<void>;
}

/**
 * The station's side of agent loops on workers (docs/workers.md#agent-steps): creates or finds a step's agent
 * run for the worker that holds the step's claim, hands a worker a run queued on its queues under a claim of
 * its own (docs/workers.md#agent-runs-on-a-queue), and commits each write of a loop before answering, once per
 * write id, refusing writes from a worker whose claim lapsed (another took the step or run over).
 */
export class AgentHost {
  #o: AgentHostOptions;
  #subs: Subscription[] = [];
  #stopReleases?: () => void;

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
    serve(AGENT_TAKE_SUBJECT, (b) => this.#take(AgentTakeRequest.parse(b)));
    serve(
      AGENT_RENEW_SUBJECT,
      (b) => this.#o.claims.renew(AgentClaimsRequest.parse(b).claims, this.#o.leaseMs),
    );
    serve(AGENT_RELEASE_SUBJECT, (b) => {
      const released = this.#o.claims.release(AgentClaimsRequest.parse(b).claims);
      if (released > 0) this.queued();
      return { released };
    });
    serve(AGENT_MODEL_SUBJECT, (b) => this.#model(ModelPermitRequest.parse(b)));
    // Every limited call's end, the station's own and the workers': their calls held by concurrency ask again.
    this.#stopReleases = this.#o.agents.limits.onRelease(() =>
      this.#o.nc.publish(AGENT_MODEL_RELEASED_SUBJECT)
    );
  }

  /** Stops answering (workers retry until a station answers). */
  stop(): void {
    for (const s of this.#subs) s.unsubscribe();
    this.#subs = [];
    this.#stopReleases?.();
  }

  /** Tells idle workers a run waits on a queue (they also ask every second). */
  queued(): void {
    this.#o.nc.publish(AGENT_QUEUED_SUBJECT);
  }

  async #answer<T>(msg: Msg, handle: (body: unknown) => Promise<T> | T): Promise<void> {
    let reply: unknown;
    try {
      reply = await handle(msg.json());
      // A worker moves on (calls the model, runs the tool) once answered: what it follows from is synced first.
      await this.#o.durable?.();
    } catch (err) {
      log.warn("agent request refused", { subject: msg.subject, error: errorMessage(err) });
      // A StationError's own code (claim_lost, agent_not_found, …); a malformed request is invalid_request.
      const code = err instanceof StationError ? err.code : "invalid_request";
      reply = { error: { code, message: errorMessage(err) } };
    }
    if (msg.reply) msg.respond(JSON.stringify(reply ?? {}));
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
    return await this.#handover(run, plan, def);
  }

  /** A queued run of the worker's queues, taken for it, with what its loop needs. */
  async #take(req: AgentTakeRequest): Promise<AgentTakeReply> {
    const run = this.#o.claims.take(req, this.#o.leaseMs);
    if (!run) return { none: true };
    const claim = { worker: req.worker, run_id: run.id, claim: run.claims };
    try {
      const { plan, def } = this.#o.agents.forQueued(run);
      return { claim, ...await this.#handover(run, plan, def) };
    } catch (err) {
      // The agent is gone or its tools cannot be planned: the run fails here, recorded, instead of looping.
      const e = err instanceof StationError ? err : undefined;
      this.#o.agents.ledger.finish(run.id, {
        status: "failed",
        finish_reason: "error",
        response: "",
        error: { code: e?.code ?? "agent_tools_unavailable", message: errorMessage(err) },
      });
      throw err;
    }
  }

  async #handover(run: AgentRunRow, plan: RunPlan, def: AgentDefinition) {
    const { ledger, limits } = this.#o.agents;
    const running = run.status === "running";
    return {
      run,
      plan,
      def,
      turns: ledger.turns(run.id),
      tool_calls: ledger.toolCalls(run.id),
      mcp: running && def.tools.length > 0 ? await this.#o.mcpPlan(run.environment, def) : null,
      limited: limits.limited(run.model),
    };
  }

  #write(req: AgentWriteRequest): AgentWriteReply {
    const { ledger } = this.#o.agents;
    this.#fence(req.claim);
    const run = ledger.get(req.run_id);
    if (!run || !claimOf(run, req.claim)) {
      throw new StationError("agent_run_not_found", `agent run ${req.run_id} is not the claimed one`);
    }
    const ended = () => ({
      ok: true as const,
      run: ledger.get(run.id),
      tool_calls: ledger.toolCalls(run.id),
    });
    if (run.status !== "running") {
      // Canceled while the worker ran it: its end is the cancel's; anything else is refused, so its loop stops.
      if (req.op === "finish") return ended();
      throw new StationError("agent_run_finished", `agent run ${run.id} has already ended (${run.status})`);
    }
    const { claims } = this.#o;
    claims.once(run.id, req.write_id, () => {
      (ledger[req.op] as (...a: unknown[]) => unknown).apply(ledger, req.args);
      if (req.op === "finish") claims.forget(run.id);
    });
    return req.op === "finish" ? ended() : { ok: true };
  }

  /** A worker's model call under `ai.limits`, decided on the ledger like the station's own calls. */
  #model(req: z.output<typeof ModelPermitRequest>): ModelPermitReply {
    const { limits } = this.#o.agents;
    switch (req.op) {
      case "acquire":
        // Only the worker holding the step or run calls its model; the one it was taken from is refused.
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

  #fence(claim: Claim): void {
    const held = "run_id" in claim ? this.#o.claims.holds(claim) : this.#o.holds(claim);
    if (!held) {
      const what = "run_id" in claim ? `agent run ${claim.run_id}` : `step ${claim.path} of run ${claim.run}`;
      throw new StationError("claim_lost", `worker ${claim.worker} no longer holds ${what}`);
    }
  }
}

/** Whether a write under this claim is to this run: the queued run itself, or the claimed step's run. */
function claimOf(run: AgentRunRow, claim: Claim): boolean {
  if ("run_id" in claim) return run.id === claim.run_id;
  return run.workflow_run_id === claim.run && run.step_path === claim.path &&
    run.step_attempt === claim.attempt;
}
