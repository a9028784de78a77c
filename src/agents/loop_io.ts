/** What the agent loop reads, writes and calls: its ledger (local or through the station) and its tools. */

import type { AgentLedger, AgentRunRow, ToolCallRow, TurnRow } from "./ledger.ts";
import type { AgentTool } from "./types.ts";

/** A tool as the loop runs it: the call id lets a child agent's run be linked to the call that started it. */
export interface LoopTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run(args: unknown, signal: AbortSignal, callId: string): Promise<string>;
  /** The MCP server serving it, when one does (for its span). */
  server?: string;
}

type Awaitable<T> = T | Promise<T>;
type Write<K extends keyof AgentLedger> = AgentLedger[K] extends (...a: infer A) => unknown
  ? (...a: A) => Awaitable<unknown>
  : never;

/**
 * What the loop reads and writes of its run: the station's AgentLedger itself, or on a `stn worker` a
 * client whose every write returns once the station committed it (docs/design/agents.md#durable-turns).
 */
export interface LoopLedger {
  turns(runId: string): Awaitable<TurnRow[]>;
  toolCalls(runId: string): Awaitable<ToolCallRow[]>;
  get(id: string): Awaitable<AgentRunRow | undefined>;
  event: Write<"event">;
  turnCompleted: Write<"turnCompleted">;
  contextCompacted: Write<"contextCompacted">;
  toolStarted: Write<"toolStarted">;
  toolFinished: Write<"toolFinished">;
  finish: Write<"finish">;
}

/** An agent tool (MCP, sandbox) as the loop runs it. */
export function loopTool(t: AgentTool): LoopTool {
  return { ...t, run: (args, signal) => t.call(args, signal) };
}
