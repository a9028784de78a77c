import { z } from "zod";
import type { AgentDefinition } from "./types.ts";
import type { AgentRunRow, ToolCallRow, TurnRow } from "./ledger.ts";
import type { RunPlan } from "./loop.ts";
import type { ThrottleWait } from "./model_limits.ts";

/**
 * What a `stn worker` running an agent loop and the station say over NATS request/reply
 * (docs/workers.md#agent-steps): the station creates (or finds) an `agent` step's run, or hands over a run
 * queued on the worker's queues under a claim of its own (docs/workers.md#agent-runs-on-a-queue), with what
 * its loop needs; every write of the loop then goes to the station, the ledger's only writer, and is committed
 * before the reply, so a worker killed mid-run leaves every finished turn and tool call recorded.
 */

export const AGENT_START_SUBJECT = "stn.workers.agent.start";
export const AGENT_WRITE_SUBJECT = "stn.workers.agent.write";
/** A worker with a free slot asks for a queued agent run of its queues (docs/workers.md#agent-runs-on-a-queue). */
export const AGENT_TAKE_SUBJECT = "stn.workers.agent.take";
/** A worker renews the leases of the queued runs it runs (every heartbeat). */
export const AGENT_RENEW_SUBJECT = "stn.workers.agent.renew";
/** A draining worker hands a queued run back: its lease lapses at once, so another worker takes it now. */
export const AGENT_RELEASE_SUBJECT = "stn.workers.agent.release";
/** Published when a queued run is created or handed back: idle workers ask for it at once. */
export const AGENT_QUEUED_SUBJECT = "stn.workers.agent.queued";
/** `stn.workers.agent.cancel.<run>`: the run was canceled; the worker running it aborts its loop. */
export const AGENT_CANCEL_SUBJECT = "stn.workers.agent.cancel";
/** A worker's model call asks the station's `ai.limits` for its permit. */
export const AGENT_MODEL_SUBJECT = "stn.workers.agent.model";
/** The station says a limited model call ended: calls held by concurrency ask again at once. */
export const AGENT_MODEL_RELEASED_SUBJECT = "stn.workers.agent.model.released";

/** The step attempt a worker holds the claim of. */
const StepClaim = z.object({
  worker: z.string().min(1),
  id: z.int(),
  run: z.string().min(1),
  path: z.string().min(1),
  attempt: z.int().min(1),
  visit: z.int(),
});
export type StepClaim = z.infer<typeof StepClaim>;

/** The claim of a run started directly on a task queue: its `claims`-th take, by this worker. */
const RunClaim = z.object({
  worker: z.string().min(1),
  run_id: z.string().min(1),
  claim: z.int().min(1),
});
export type RunClaim = z.infer<typeof RunClaim>;

/** What fences a worker's writes: the step attempt, or the queued run, it holds the claim of. */
const Claim = z.union([StepClaim, RunClaim]);
export type Claim = z.infer<typeof Claim>;

/** A worker asks for the oldest queued run of its queues. */
export const AgentTakeRequest = z.object({
  worker: z.string().min(1),
  name: z.string(),
  queues: z.array(z.string()).min(1),
});
export type AgentTakeRequest = z.infer<typeof AgentTakeRequest>;

/** The queued runs a worker runs: their leases are renewed (release: lapsed now). */
export const AgentClaimsRequest = z.object({ claims: z.array(RunClaim) });
export type AgentClaimsRequest = z.infer<typeof AgentClaimsRequest>;

/** A worker asks for its step's agent run. */
export const AgentStartRequest = z.object({
  claim: StepClaim,
  agent: z.string().min(1),
  /** Empty: the station's `workflows.environment`. */
  environment: z.string(),
  task: z.string(),
  variables: z.record(z.string(), z.unknown()),
});
export type AgentStartRequest = z.infer<typeof AgentStartRequest>;

/** A station's refusal: the error the step fails with. */
export type RemoteError = { error: { code: string; message: string } };

/** The run and what its loop needs: its stored turns and tool calls (a resume replays them), its tools. */
export type AgentStartReply = RemoteError | {
  run: AgentRunRow;
  plan: RunPlan;
  def: AgentDefinition;
  turns: TurnRow[];
  tool_calls: ToolCallRow[];
  /** The MCP tools' plan (mcp/toolbox.ts McpToolboxPlan): checked, approved, rendered by the station. */
  mcp: unknown;
  /** Whether the station's `ai.limits` apply to the run's model: its calls then ask for permits. */
  limited: boolean;
};

/** The loop's writes a worker sends (the AgentLedger methods of the same names). */
export const WRITES = [
  "event",
  "turnCompleted",
  "contextCompacted",
  "toolStarted",
  "toolFinished",
  "finish",
] as const;

/**
 * One write of the loop; applied only while the worker holds the claim of the run (or of its step attempt),
 * and once per `write_id` (the worker's own id for it): a write re-sent after a lost answer is not applied twice.
 */
export const AgentWriteRequest = z.object({
  claim: Claim,
  write_id: z.string().min(1),
  run_id: z.string().min(1),
  op: z.enum(WRITES),
  args: z.array(z.unknown()),
});
export type AgentWriteRequest = z.infer<typeof AgentWriteRequest>;

/** A queued run taken for the worker, with what its loop needs; `none` when no run waits on its queues. */
export type AgentTakeReply =
  | RemoteError
  | { none: true }
  | (Exclude<AgentStartReply, RemoteError> & {
    claim: RunClaim;
  });

/** Committed; after `finish`, the ended run and its tool calls. */
export type AgentWriteReply = RemoteError | { ok: true; run?: AgentRunRow; tool_calls?: ToolCallRow[] };

/**
 * A worker's model call under the station's `ai.limits` (agents/model_limits.ts): ask for its permit
 * (`acquire`, again after each wait), keep it while the model answers (`renew`), end it with the tokens it
 * used (`release`), or hold the model for everyone for a provider's Retry-After (`block`, `wait_ms`).
 */
export const ModelPermitRequest = z.object({
  /** The step attempt or queued run the worker holds: a worker whose claim lapsed gets no permit. */
  claim: Claim,
  op: z.enum(["acquire", "renew", "release", "block"]),
  id: z.string(),
  /** The model called (`acquire`, `block`). */
  model: z.string().default(""),
  tokens: z.int().min(0).default(0),
  wait_ms: z.number().min(0).default(0),
});
export type ModelPermitRequest = z.input<typeof ModelPermitRequest>;

/** `wait`: how long before asking again (none: go); `keys`: the limit keys a `block` held. */
export type ModelPermitReply = RemoteError | { wait?: ThrottleWait; keys?: string[] };
