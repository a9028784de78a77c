import type { McpToolSpec } from "./tool.ts";

/**
 * The agent server's tools for agents (`agent_<name>`, input `task` + `variables`). None until the agent
 * layer lands: then this returns one tool per agent of the served environment, and the agent registry joins
 * the change sources of `watchTools` (src/mcp/server/mod.ts), so `stn sync` changing agents sends
 * tools/list_changed as it does for workflows.
 */
export function agentTools(): McpToolSpec[] {
  return [];
}
