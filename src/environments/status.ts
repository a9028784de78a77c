import { join } from "node:path";
import { loadAgentsFolder } from "../agents/definition/mod.ts";
import { getStoredAgent } from "../agents/store.ts";
import type { Database } from "../db/database.ts";
import { knownMcpTools, listMcpServers, listMcpTools } from "../mcp/mod.ts";
import type { ValidationIssue } from "../workflows/definition/validate.ts";
import { type EnvironmentDetails, showEnvironment } from "./environments.ts";

/**
 * `stn env show` with what the station knows beyond the files: each MCP server's tools and last
 * discovery error from the catalogue (`stn sync` fills it), and each agent checked as sync would
 * check it and compared with the agents table. Reading it starts no server.
 */

/** Whether the agents table holds this file's current content. */
export type AgentSyncState = "current" | "outdated" | "never";

/** An agent file: valid or not (with file:line issues), and whether sync stored this version. */
export interface AgentStatus {
  name: string;
  file: string;
  status: "valid" | "invalid";
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  synced: AgentSyncState;
}

/** An MCP server of the environment's configs and what its last discovery found. */
export interface McpServerStatus {
  name: string;
  file: string;
  transport: "stdio" | "http" | "unknown";
  /** `never_synced` until `stn sync` has started it once. */
  status: "ok" | "failed" | "never_synced";
  /** Tools the catalogue holds for it (null when never synced). */
  tools: number | null;
  discovered_at: string | null;
  error?: { code: string; message: string; hint?: string };
}

/** EnvironmentDetails with agent and MCP server status. */
export interface EnvironmentStatus extends Omit<EnvironmentDetails, "agents"> {
  agents: AgentStatus[];
  mcp_servers: McpServerStatus[];
}

/**
 * The MCP tools an environment's agents are checked against, or undefined before its first sync: then
 * every tool would look unknown, which says nothing about the agent file.
 */
export function catalogueTools(db: Database, environment: string): ReadonlyMap<string, string> | undefined {
  return listMcpServers(db, environment).length ? knownMcpTools(db, environment) : undefined;
}

/** The environment's files (showEnvironment) joined with the MCP catalogue and the agents table. */
export async function environmentStatus(
  db: Database,
  environmentsDir: string,
  name: string,
  env?: (name: string) => string | undefined,
): Promise<EnvironmentStatus> {
  const details = await showEnvironment(environmentsDir, name, env);
  const stored = new Map(listMcpServers(db, name).map((s) => [s.name, s]));
  const toolCount = new Map<string, number>();
  for (const t of listMcpTools(db, name)) toolCount.set(t.server, (toolCount.get(t.server) ?? 0) + 1);
  const mcp_servers = details.mcp_configs.flatMap((c) =>
    c.servers.map((s): McpServerStatus => {
      // The catalogue names its files by absolute path.
      const row = stored.get(s.name);
      if (!row || row.config_file !== join(details.path, c.file)) {
        return { ...s, file: c.file, status: "never_synced", tools: null, discovered_at: null };
      }
      return {
        ...s,
        file: c.file,
        status: row.error ? "failed" : "ok",
        tools: toolCount.get(s.name) ?? 0,
        discovered_at: row.discovered_at,
        ...(row.error ? { error: row.error } : {}),
      };
    })
  );
  const parsed = await loadAgentsFolder(join(details.path, "agents"), {
    environment: name,
    knownTools: catalogueTools(db, name),
    // As sync checks them: a tool of a server not discovered yet is a warning, not an error.
    pendingServers: mcp_servers.filter((s) => s.status !== "ok").map((s) => s.name),
  });
  const agents = parsed.map((a): AgentStatus => {
    const row = getStoredAgent(db, name, a.name);
    const synced: AgentSyncState = !row
      ? "never"
      : a.definition && row.definition.checksum === a.definition.checksum
      ? "current"
      : "outdated";
    return {
      name: a.name,
      file: `agents/${a.path.split("/").pop()}`,
      status: a.definition ? "valid" : "invalid",
      errors: a.errors,
      warnings: a.warnings,
      synced,
    };
  });
  return { ...details, agents, mcp_servers };
}
