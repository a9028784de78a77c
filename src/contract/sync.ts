import { z } from "zod";
import { AgentSyncReport } from "./agents.ts";
import { ValidationIssue } from "./workflows.ts";

/** POST /api/v1/sync `{environment?, trust?}` (default: the configured environment). */
export const SyncBody = z.strictObject({
  environment: z.string().min(1).optional(),
  trust: z.boolean().optional().describe(
    "approve every MCP server the environment's configs define now, as written, before syncing",
  ),
}).meta({ id: "SyncBody" });

/**
 * What an MCP server really launches, read from its config (never a manifest's claim): the command and
 * its arguments, cwd and env (secret values written in the file masked, placeholders as written), or the
 * URL (secret query values masked) and the names of the headers sent.
 */
export const McpLaunch = z.looseObject({
  transport: z.enum(["stdio", "http"]),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  url: z.string().optional(),
  headers: z.array(z.string()).optional().describe("the header names (their values are not shown)"),
}).meta({ id: "McpLaunch" });
export type McpLaunch = z.infer<typeof McpLaunch>;

/** The launch as one line for people: `sh -c id > pwned`, or the URL. */
export function launchLine(l: McpLaunch): string {
  return l.transport === "http" ? l.url ?? "" : [l.command ?? "", ...(l.args ?? [])].join(" ");
}

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
  status: z.enum(["ok", "failed", "untrusted"]).describe(
    "failed: the server's error says why; untrusted: not started, its launch is not approved " +
      "(`stn mcp approve`); either way the tools found before are kept",
  ),
  tools: z.array(z.string()).describe("the tools agents can use, by their exposed name (`__<tool>`)"),
  launch: McpLaunch.optional().describe("what the server launches, as its config writes it"),
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

/** POST /api/v1/environments/{name}/mcp-servers/{server}/approve and …/{name}/trust: what was approved. */
export const McpApprovals = z.looseObject({
  environment: z.string(),
  approved: z.array(z.looseObject({
    server: z.string(),
    digest: z.string().describe("sha256 of the launch spec as its config writes it"),
    approved_at: z.string(),
    launch: McpLaunch,
  })),
}).meta({ id: "McpApprovals" });
export type McpApprovals = z.infer<typeof McpApprovals>;
