import type { McpToolSpec } from "./tool.ts";

/**
 * The agent server's tools for agents (`agent_<name>`, input `task` + `variables`). None until the agent
 * layer lands: then this returns one tool per agent of the served environment, and the agent layer calls
 * the server's `toolsChanged()` when `stn sync` changes agents, as the workflow store does for workflows.
 */
export function agentTools(): McpToolSpec[] {
  return [];
}
