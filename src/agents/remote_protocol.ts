import { z } from "zod";
import type { AgentDefinition } from "./types.ts";
import type { AgentRunRow, ToolCallRow, TurnRow } from "./ledger.ts";
import type { RunPlan } from "./loop.ts";

/**
 * What a `stn worker` running an `agent` step and the station say over NATS request/reply
 * (docs/workers.md#agent-steps): the station creates (or finds) the step's agent run and hands over what
 * its loop needs; every write of the loop then goes to the station, the ledger's only writer, and is
 * committed before the reply, so a worker killed mid-run leaves every finished turn and tool call recorded.
 */

export const AGENT_START_SUBJECT = "stn.workers.agent.start";
export const AGENT_WRITE_SUBJECT = "stn.workers.agent.write";

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

/** One write of the loop; applied only while the worker holds the claim of the run's step attempt. */
export const AgentWriteRequest = z.object({
  claim: StepClaim,
  run_id: z.string().min(1),
  op: z.enum(WRITES),
  args: z.array(z.unknown()),
});
export type AgentWriteRequest = z.infer<typeof AgentWriteRequest>;

/** Committed; after `finish`, the ended run and its tool calls. */
export type AgentWriteReply = RemoteError | { ok: true; run?: AgentRunRow; tool_calls?: ToolCallRow[] };
