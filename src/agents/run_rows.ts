/** Row types of the agent-run tables (migration 0007); `ledger.ts` is the only code that queries them. */

export type AgentRunStatus = "running" | "completed" | "failed" | "canceled";
/** What started a run: a caller (CLI, API, MCP), its schedule, a workflow step or a parent agent. */
export type RunTrigger = "manual" | "schedule" | "workflow" | "agent";
export type FinishReason = "stop" | "max_steps" | "output_invalid" | "timeout" | "canceled" | "error";

/** Token counts, summed over a run's turns. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  total_tokens: number;
}

/** A run's failure as stored and shown. */
export interface RunError {
  code: string;
  message: string;
}

export interface AgentRunRow extends Usage {
  id: string;
  agent: string;
  environment: string;
  model: string;
  task: string;
  variables: string;
  /** The rendered prompt and the limits the run started with (JSON of RunPlan): what a resume replays. */
  plan: string;
  status: AgentRunStatus;
  finish_reason: FinishReason | null;
  response: string | null;
  result: string | null;
  error: string | null;
  turns: number;
  parent_run_id: string | null;
  parent_call_id: string | null;
  workflow_run_id: string | null;
  step_path: string | null;
  step_visit: number | null;
  step_attempt: number | null;
  trace_id: string | null;
  trigger: RunTrigger;
  created_at: string;
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
}

export interface TurnRow extends Usage {
  run_id: string;
  turn: number;
  /** The model's response messages (AI SDK ModelMessage JSON), appended to the conversation. */
  messages: string;
  text: string;
  finish_reason: string;
  duration_ms: number;
  created_at: string;
}

export interface ToolCallRow {
  run_id: string;
  call_id: string;
  turn: number;
  position: number;
  name: string;
  arguments: string;
  status: "running" | "completed" | "failed";
  /** What the model was given (already cut to agents.max_tool_output). */
  output: string | null;
  output_bytes: number | null;
  truncated: number;
  error: string | null;
  started_at: string;
  /** When its result was checkpointed (null while running, and for calls before migration 0020). */
  ended_at: string | null;
  duration_ms: number | null;
  /** The MCP server that served it; null for sandbox tools and child agents. */
  server: string | null;
  /** The turn before which its output was removed from the model's context (docs/agents.md#context-window). */
  removed_at_turn: number | null;
}

export interface AgentEventRow {
  run_id: string;
  seq: number;
  type: string;
  data: string | null;
  time: string;
}
