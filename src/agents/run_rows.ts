/** Row types of the agent-run tables (migration 0007) and what the ledger is asked; `ledger.ts` is the only code that queries them. */

import type { AgentAdmission } from "./admission.ts";

export type AgentRunStatus = "running" | "waiting_for_concurrency" | "completed" | "failed" | "canceled";

/** Whether a run has ended (a waiting run has not: it runs once admitted). */
export function runEnded(status: AgentRunStatus): boolean {
  return status !== "running" && status !== "waiting_for_concurrency";
}
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

/** How a run ends: its final status, why, its answer or error. */
export interface RunEnd {
  status: "completed" | "failed" | "canceled";
  finish_reason: FinishReason;
  response: string;
  result?: unknown;
  error?: RunError;
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
  /** USD at the price the run started with (docs/agents.md#cost); null when its model has no known price. */
  cost_usd: number | null;
  /** The task queue a `stn worker` takes it from (migration 0028); null: it runs on the station. */
  queue: string | null;
  /** The worker holding its claim; null while none has taken it (a queued run). */
  owner: string | null;
  /** When the claim lapses unless its worker's heartbeats renew it (ms since epoch). */
  lease_until: number;
  /** How many times a worker took it: the number of the current claim. */
  claims: number;
}

export interface TurnRow extends Usage {
  run_id: string;
  turn: number;
  /** The model's response messages (AI SDK ModelMessage JSON), appended to the conversation. */
  messages: string;
  text: string;
  finish_reason: string;
  duration_ms: number;
  /** USD; null when the run's model has no known price. */
  cost_usd: number | null;
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

/** A new run's fields (the ledger adds id, status and times). */
export interface NewRun {
  agent: string;
  environment: string;
  model: string;
  task: string;
  variables: Record<string, unknown>;
  plan: unknown;
  parentRunId?: string;
  parentCallId?: string;
  step?: { runId: string; path: string; visit: number; attempt: number };
  traceId?: string;
  /** Its model has a price (docs/agents.md#cost): its cost starts at 0, else it stays null (unknown). */
  priced?: boolean;
  /** Routed to this task queue: waiting for a `stn worker` serving it (once admitted, with `admission`). */
  queue?: string;
  /** Its concurrency keys and priority (admission.ts): it waits, status `waiting_for_concurrency`, unless all fit. */
  admission?: AgentAdmission;
  /** `schedule` for a scheduled run; else derived: a step's run is `workflow`, a child's `agent`, the rest `manual`. */
  trigger?: RunTrigger;
  /**
   * Called inside the transaction that would create run `runId`: the id of a run to return instead,
   * creating nothing (an idempotent start whose key already started one), or undefined to go on.
   */
  claim?: (runId: string) => string | undefined;
}

/** Which runs to list, newest first; `cursor` is the last id of the previous page. */
export interface AgentRunQuery {
  agent?: string;
  workflowRunId?: string;
  /** `queued`: a run on a task queue that no worker has taken yet (stored `running`). */
  status?: AgentRunStatus | "queued";
  cursor?: string;
  limit: number;
}
