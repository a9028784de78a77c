import { z } from "zod";
import { AgentSyncReport } from "./agents.ts";
import { ValidationIssue } from "./workflows.ts";

/** POST /api/v1/sync `{environment?}` (default: the configured environment). */
export const SyncBody = z.strictObject({ environment: z.string().min(1).optional() }).meta({
  id: "SyncBody",
});

const SyncedWorkflow = z.looseObject({ id: z.string(), version: z.number(), file: z.string() });

/** Why an MCP server's discovery failed, or a problem in a config file (with its place). */
const McpSyncError = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
});

/** One MCP server of the environment and what discovery found on it. */
export const McpServerSync = z.object({
  name: z.string(),
  file: z.string().describe("the config file it is defined in"),
  transport: z.enum(["stdio", "http"]),
  status: z.enum(["ok", "failed"]).describe(
    "failed: the server's error says why; the tools found before are kept",
  ),
  tools: z.array(z.string()).describe("the tools agents can use, by their exposed name (`__<tool>`)"),
  error: McpSyncError.optional(),
}).meta({ id: "McpServerSync" });

/** What a sync did with an environment's MCP config files. */
export const McpSyncReport = z.object({
  servers: z.array(McpServerSync),
  removed: z.array(z.string()).describe(
    "servers whose config (file or entry) is gone; their tools went with them",
  ),
  errors: z.array(McpSyncError.extend({
    file: z.string(),
    line: z.number().optional(),
    column: z.number().optional(),
  })).describe(
    "malformed config files or entries (left as they were stored) and tools offered by two servers",
  ),
}).meta({ id: "McpSyncReport" });
export type McpSyncReport = z.infer<typeof McpSyncReport>;

/** What a sync of an environment's MCP configs, agents and workflows did, per outcome. */
export const SyncReport = z.looseObject({
  environment: z.string(),
  directory: z.string(),
  created: z.array(SyncedWorkflow),
  updated: z.array(SyncedWorkflow),
  unchanged: z.array(SyncedWorkflow),
  enabled: z.array(z.string()),
  disabled: z.array(z.string()),
  invalid: z.array(z.looseObject({ file: z.string(), errors: z.array(ValidationIssue) })),
  agents: AgentSyncReport.optional().describe("the environment's agents, synced before its workflows"),
  /** The MCP servers, synced before the agents and workflows. */
  mcp_servers: McpSyncReport,
}).meta({ id: "SyncReport" });
export type SyncReport = z.infer<typeof SyncReport>;
