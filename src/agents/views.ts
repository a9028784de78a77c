/** The API shapes of an agent run and its tool calls (docs/design/agents.md#runs, docs/agents.md#tool-calls). */

import type { AgentRun } from "../contract/agent_runs.ts";
import type { AgentRunRow, ToolCallRow, TurnRow } from "./run_rows.ts";
import { cutToolOutput, TOOL_OUTPUT_DISPLAY_BYTES } from "./tool_output.ts";

/** What a run's view reads of its history (the agent ledger; narrow so the ledger can use the views). */
export interface RunHistory {
  turns(runId: string): TurnRow[];
  toolCalls(runId: string): ToolCallRow[];
}

const parse = (s: string | null) => (s === null ? null : JSON.parse(s));

/** A tool call as the API shows it (docs/agents.md#tool-calls): its output cut for display unless `full`. */
export function toolCallView(c: ToolCallRow, full = false): AgentRun["tool_calls"][number] {
  const shown = c.output === null || full ? undefined : cutToolOutput(c.output, TOOL_OUTPUT_DISPLAY_BYTES);
  return {
    call_id: c.call_id,
    turn: c.turn,
    name: c.name,
    server: c.server,
    arguments: JSON.parse(c.arguments),
    output: shown ? shown.text : c.output,
    output_partial: shown?.truncated ?? false,
    output_bytes: c.output_bytes,
    truncated: c.truncated === 1,
    started_at: c.started_at,
    ended_at: c.ended_at,
    duration_ms: c.duration_ms,
    status: c.status,
    ...(c.error !== null ? { error: c.error } : {}),
    removed_at_turn: c.removed_at_turn,
  };
}

/**
 * The API shape of a run (docs/design/agents.md#runs): its tool calls always (outputs whole with `full`), its
 * turns with `history`.
 */
export function agentRunView(ledger: RunHistory, row: AgentRunRow, history = false, full = false): AgentRun {
  const view: AgentRun = {
    run_id: row.id,
    agent: row.agent,
    environment: row.environment,
    model: row.model,
    task: row.task,
    variables: JSON.parse(row.variables),
    status: queued(row) ? "queued" : row.status,
    finish_reason: row.finish_reason,
    response: row.response,
    ...(row.result !== null ? { result: JSON.parse(row.result) } : {}),
    error: parse(row.error),
    turns: row.turns,
    usage: {
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      cached_tokens: row.cached_tokens,
      total_tokens: row.total_tokens,
    },
    cost_usd: row.cost_usd,
    tool_calls: ledger.toolCalls(row.id).map((c) => toolCallView(c, full)),
    duration_ms: row.duration_ms,
    parent_run_id: row.parent_run_id,
    workflow_run_id: row.workflow_run_id,
    step_path: row.step_path,
    step_attempt: row.step_attempt,
    trace_id: row.trace_id,
    trigger: row.trigger,
    started_at: row.started_at,
    ended_at: row.ended_at,
    queue: row.queue,
    owner: row.owner,
  };
  if (history) {
    view.history = ledger.turns(row.id).map((t) => ({
      turn: t.turn,
      text: t.text,
      finish_reason: t.finish_reason,
      tool_calls: toolNames(t.messages),
      usage: {
        input_tokens: t.input_tokens,
        output_tokens: t.output_tokens,
        cached_tokens: t.cached_tokens,
        total_tokens: t.total_tokens,
      },
      cost_usd: t.cost_usd,
      duration_ms: t.duration_ms,
    }));
  }
  return view;
}

/** A run on a task queue that no worker has taken yet: shown `queued` (it is stored `running`). */
export function queued(row: AgentRunRow): boolean {
  return row.status === "running" && row.queue !== null && row.owner === null;
}

function toolNames(messages: string): string[] {
  const names: string[] = [];
  for (const m of JSON.parse(messages) as { content: unknown }[]) {
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content) if (p.type === "tool-call") names.push(p.toolName);
  }
  return names;
}
