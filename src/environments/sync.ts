import type { McpSyncReport } from "../contract/sync.ts";
import type { Config } from "../config/schema.ts";
import type { Database } from "../db/database.ts";
import { knownMcpTools, syncMcpServers } from "../mcp/mod.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import { syncEnvironment, type SyncReport } from "./declarative_sync.ts";
import { requireEnvironment } from "./names.ts";

/**
 * DeclarativeSync of one environment, the one path `stn sync`, `POST /api/v1/sync` and a bundle install
 * take: MCP servers first (their discovery fills the tool catalogue that agents are validated against),
 * then agents, then workflows (whose agent steps are checked against the agents). `trust` approves
 * the environment's MCP servers as written first; without it an unapproved server is not started.
 */
export async function syncWholeEnvironment(
  environment: string,
  { db, workflows, environmentsDir, trust, sandbox }: WholeSyncOptions,
): Promise<SyncReport & { mcp_servers: McpSyncReport }> {
  const directory = await requireEnvironment(environmentsDir, environment);
  const mcp_servers = await syncMcpServers(db, { environment, directory }, { trust });
  const report = await syncEnvironment(workflows, environmentsDir, environment, {
    db,
    agents: {
      knownTools: knownMcpTools(db, environment),
      // Tools of servers not discovered yet are checked once they are (warnings until then).
      pendingServers: mcp_servers.servers.filter((s) => s.status !== "ok").map((s) => s.name),
    },
    sandbox,
  });
  return { ...report, mcp_servers };
}

/** Where a whole-environment sync reads and writes, and whether it approves the MCP servers (trust). */
export interface WholeSyncOptions {
  db: Database;
  workflows: WorkflowStore;
  environmentsDir: string;
  trust?: boolean;
  sandbox?: Config["sandbox"];
}
