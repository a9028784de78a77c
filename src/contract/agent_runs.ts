/** The contract of agent runs: starting one, the run with its turns and tool calls, its events, lists. */

import { z } from "zod";
import { TaskQueue } from "./task_queue.ts";

/** The states of an agent run. */
export const AgentRunStatus = z.enum([
  "queued",
  "running",
  "waiting_for_concurrency",
  "completed",
  "failed",
  "canceled",
]).describe(
  "queued: on a task queue, waiting for a `stn worker` serving it to take it (docs/workers.md#agent-runs-on-a-queue); " +
    "waiting_for_concurrency: waiting for a slot of its concurrency keys (docs/agents.md#concurrency)",
);
/** Why an agent run ended (docs/design/agents.md#runs). */
export const AgentFinishReason = z.enum([
  "stop",
  "max_steps",
  "output_invalid",
  "timeout",
  "canceled",
  "error",
]);

/** Token counts summed over a run's turns. */
export const AgentUsage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cached_tokens: z.number(),
  total_tokens: z.number(),
}).meta({ id: "AgentUsage" });

/** One tool call of a run (docs/agents.md#tool-calls): what the model asked for, what came back, when, from where. */
export const AgentToolCall = z.looseObject({
  call_id: z.string(),
  turn: z.number(),
  name: z.string(),
  server: z.string().nullable().describe(
    "the MCP server that served it; null for sandbox tools and child agents",
  ),
  arguments: z.unknown().describe("the call's input, as the model sent it"),
  output: z.string().nullable().describe(
    "what the model was given (cut to agents.max_tool_output); shown up to 2 KB unless ?full=1; null while running",
  ),
  output_partial: z.boolean().describe("true when `output` shows only its first 2 KB (?full=1 gives it all)"),
  output_bytes: z.number().nullable().describe("the tool's whole output in bytes, before any cut"),
  truncated: z.boolean().describe("the output was cut to agents.max_tool_output before the model saw it"),
  started_at: z.string(),
  ended_at: z.string().nullable().describe("null while running, and on calls recorded before ends were kept"),
  duration_ms: z.number().nullable(),
  error: z.string().optional(),
  status: z.enum(["running", "completed", "failed"]),
  removed_at_turn: z.number().nullable().describe(
    "the turn before which the output was replaced by a marker to fit the context window (docs/agents.md#context-window)",
  ),
}).meta({ id: "AgentToolCall" });

/** One model turn of a run. */
export const AgentTurn = z.looseObject({
  turn: z.number(),
  text: z.string(),
  finish_reason: z.string(),
  tool_calls: z.array(z.string()),
  usage: AgentUsage,
  cost_usd: z.number().nullable().describe("USD at ai.prices; null when the model has no known price"),
  duration_ms: z.number(),
}).meta({ id: "AgentTurn" });

/** Why a run has not started running: its concurrency key (waiting_for_concurrency) or its queue (queued). */
export const AgentRunWait = z.object({
  key: z.string().optional().describe("waiting_for_concurrency: the first concurrency key it waits for"),
  position: z.number().optional().describe(
    "waiting_for_concurrency: its place in that key's queue (1 = next)",
  ),
  queue: z.string().optional().describe("queued: the task queue whose `stn worker` it waits for"),
  reason: z.string().optional().describe(
    "queued: why it waits, e.g. `a worker on queue gpu: none is serving it` (and how to start one)",
  ),
}).describe("why the run waits (a `waiting_for_concurrency` or `queued` run)").meta({ id: "AgentRunWait" });
export type AgentRunWait = z.infer<typeof AgentRunWait>;

/** A wait in words, for the CLI and the dashboard: `concurrency key K, position N`, or a queued run's reason. */
export function describeWait(w: AgentRunWait): string {
  return w.key !== undefined
    ? `concurrency key ${w.key}, position ${w.position}`
    : w.reason ?? `queue ${w.queue}`;
}

/** An agent run: the result of docs/design/agents.md#runs plus its links, turns and tool calls. */
export const AgentRun = z.looseObject({
  run_id: z.string(),
  agent: z.string(),
  environment: z.string(),
  model: z.string(),
  task: z.string(),
  variables: z.record(z.string(), z.unknown()),
  status: AgentRunStatus,
  waiting_for: AgentRunWait.optional(),
  finish_reason: AgentFinishReason.nullable(),
  response: z.string().nullable(),
  result: z.unknown().optional().describe("the parsed JSON answer, when the agent has an output schema"),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  turns: z.number(),
  usage: AgentUsage,
  cost_usd: z.number().nullable().describe(
    "what the run's model calls cost in USD at ai.prices when they were made (docs/agents.md#cost); null when " +
      "its model has no known price",
  ),
  tool_calls: z.array(AgentToolCall),
  history: z.array(AgentTurn).optional().describe("each model turn (GET of one run)"),
  duration_ms: z.number().nullable(),
  parent_run_id: z.string().nullable(),
  workflow_run_id: z.string().nullable(),
  step_path: z.string().nullable(),
  step_attempt: z.number().nullable(),
  trace_id: z.string().nullable(),
  trigger: z.enum(["manual", "schedule", "workflow", "agent"]).describe(
    "what started the run: a caller (CLI, API, MCP), the agent's schedule, a workflow step, a parent agent",
  ),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  queue: z.string().nullable().describe(
    "the task queue a `stn worker` runs it from (`queue:` of its .prompt, or the start's); null: on the station",
  ),
  owner: z.string().nullable().describe(
    "the id of the `stn worker` that runs it (`stn workers`); null for none",
  ),
}).meta({ id: "AgentRun" });
export type AgentRun = z.infer<typeof AgentRun>;

/** POST /api/v1/agents/{name}/runs */
export const StartAgentRunBody = z.strictObject({
  task: z.string().min(1).describe("what the agent should do (the prompt's {{userInput}})"),
  variables: z.record(z.string(), z.unknown()).default({}).describe("the agent's input variables"),
  environment: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/).optional().describe(
    "the environment whose agent runs (default: workflows.environment)",
  ),
  record: z.boolean().optional().describe(
    "record the run's model and tool calls: GET /api/v1/agent-runs/{run_id}/cassette answers the cassette",
  ),
  queue: TaskQueue.optional().describe(
    "run it on a `stn worker` serving this task queue (over the agent's `queue:`); it waits until one takes it",
  ),
  priority: z.int().min(0).max(9).optional().describe(
    "0 (last) to 9 (first) when the agent's concurrency slots are scarce; default the agent's `priority`, else 5",
  ),
}).meta({ id: "StartAgentRunBody" });
export type StartAgentRunBody = z.input<typeof StartAgentRunBody>;

export const StartAgentRunQuery = z.object({
  wait: z.enum(["1", "true", "0", "false"]).optional().describe("1: answer when the run has ended"),
});

export const AgentNameParam = z.object({ name: z.string().min(1) });
export const AgentRunIdParam = z.object({
  run_id: z.string().min(1).describe("the agent run's id (arun_…)"),
});
export const AgentToolCallParam = z.object({
  run_id: z.string().min(1).describe("the agent run's id (arun_…)"),
  call_id: z.string().min(1).describe("the tool call's id"),
});

/** GET /api/v1/agent-runs/{run_id} */
export const AgentRunGetQuery = z.object({
  full: z.enum(["1", "true", "0", "false"]).optional().describe(
    "1: each tool call's whole output (default: its first 2 KB)",
  ),
});

/** GET /api/v1/agent-runs */
export const AgentRunListQuery = z.object({
  agent: z.string().optional(),
  workflow_run_id: z.string().optional().describe("only the runs of this workflow run's agent steps"),
  status: AgentRunStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional().describe("next_cursor of the previous page"),
});
// limit goes in as a number (the schema coerces the query string); the rest as the schema says.
export type AgentRunListQuery = Omit<z.input<typeof AgentRunListQuery>, "limit"> & { limit?: number };

export const AgentRunList = z.looseObject({
  runs: z.array(AgentRun),
  next_cursor: z.string().nullable().describe("pass as cursor for the next page; null on the last"),
}).meta({ id: "AgentRunList" });
export type AgentRunList = z.infer<typeof AgentRunList>;

/** One event of an agent run, as sent in the `data` of an SSE message (`id` is `seq`, `event` is `type`). */
export const AgentRunEvent = z.looseObject({
  seq: z.number(),
  type: z.string(),
  data: z.unknown(),
  time: z.string(),
}).meta({ id: "AgentRunEvent" });
export type AgentRunEvent = z.infer<typeof AgentRunEvent>;
