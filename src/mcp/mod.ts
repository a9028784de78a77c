/**
 * MCP tools of agents: the environment's server configs, tool discovery at sync, the catalogue, and the
 * toolbox an agent run opens. The SDK stays inside client/.
 */
export { exposedToolName, knownMcpTools, listMcpServers, listMcpTools } from "./catalogue.ts";
export type { McpServerRecord, McpToolRecord } from "./catalogue.ts";
export { McpPool } from "./pool.ts";
export type { McpPoolSettings } from "./pool.ts";
export { syncMcpServers } from "./sync.ts";
export type { McpSyncOptions, McpSyncTarget } from "./sync.ts";
export { mcpToolSpecs, openMcpToolbox, openPlannedToolbox, planMcpToolbox } from "./toolbox.ts";
export type { McpLaunch, McpToolboxOptions, McpToolboxPlan } from "./toolbox.ts";
export { approveEnvironment, isApproved, launchOf } from "./trust.ts";
export type { McpApproval } from "./trust.ts";
