import type { Migration } from "../migrate.ts";

/**
 * What a tool call shows (issue 35, docs/agents.md#tool-calls): when it ended and which MCP server served it,
 * and the turn before which its output was removed from the model's context (docs/agents.md#context-window) —
 * stored, so a resumed run rebuilds the same compacted history.
 */
export default {
  version: 20,
  name: "agent_tool_call_detail",
  sql: `
    ALTER TABLE agent_tool_calls ADD COLUMN ended_at TEXT;
    ALTER TABLE agent_tool_calls ADD COLUMN server TEXT;
    ALTER TABLE agent_tool_calls ADD COLUMN removed_at_turn INTEGER;
  `,
} satisfies Migration;
