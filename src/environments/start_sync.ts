/**
 * Station start: makes sure the configured environment exists (created empty when missing) and syncs
 * every `environments/*` folder, each on its own: one that fails is logged and the others still sync.
 */

import type { McpSyncReport } from "../contract/sync.ts";
import type { Config } from "../config/schema.ts";
import type { Database } from "../db/database.ts";
import { errorMessage } from "../errors.ts";
import { log } from "../log.ts";
import { knownMcpTools, syncMcpServers } from "../mcp/mod.ts";
import { formatInvalid } from "../workflows/definition/format.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import { syncEnvironment, type SyncReport } from "./declarative_sync.ts";
import { ensureEnvironment, environmentNames } from "./environments.ts";
import { requireEnvironment } from "./names.ts";

/** What the start's sync did with one environment: its report, or why it failed. */
export type StartSyncResult =
  | { environment: string; ok: true; report: SyncReport }
  | { environment: string; ok: false; error: string };

/** Where the environments are and which one is the default (`workflows.environment`). */
export interface StartSyncTarget {
  environmentsDir: string;
  defaultEnvironment: string;
}

/**
 * Creates the default environment when missing, then syncs every environment in turn. With `mcp`
 * (stn serve) an environment's MCP servers sync first — only approved ones start; an unapproved one is
 * reported, never started. Agents are not checked against the MCP tools here (as before MCP approval
 * existed), so an unapproved server holds back nothing else; `stn sync` checks them.
 */
export async function syncAtStart(
  db: Database,
  workflows: WorkflowStore,
  target: StartSyncTarget,
  options: { mcp: boolean; sandbox?: Config["sandbox"] },
): Promise<StartSyncResult[]> {
  const { environmentsDir, defaultEnvironment } = target;
  try {
    if (await ensureEnvironment(environmentsDir, defaultEnvironment)) {
      log.info(`created the empty environment ${defaultEnvironment}`, { directory: environmentsDir });
    }
  } catch (err) {
    log.warn(`could not create the environment ${defaultEnvironment}`, { error: errorMessage(err) });
  }
  const results: StartSyncResult[] = [];
  for (const environment of await environmentNames(environmentsDir)) {
    try {
      const directory = await requireEnvironment(environmentsDir, environment);
      const mcp_servers = options.mcp ? await syncMcpServers(db, { environment, directory }) : undefined;
      const report = await syncEnvironment(workflows, environmentsDir, environment, {
        db,
        sandbox: options.sandbox,
        // Servers just synced: agents are checked against their tools as `stn sync` checks them.
        ...(mcp_servers
          ? {
            agents: {
              knownTools: knownMcpTools(db, environment),
              pendingServers: mcp_servers.servers.filter((s) => s.status !== "ok").map((s) => s.name),
            },
          }
          : {}),
      });
      logReport({ ...report, mcp_servers });
      results.push({ environment, ok: true, report });
    } catch (err) {
      log.warn(`sync of environment ${environment} at start failed; the others go on`, {
        error: errorMessage(err),
      });
      results.push({ environment, ok: false, error: errorMessage(err) });
    }
  }
  return results;
}

function logReport(report: SyncReport & { mcp_servers?: McpSyncReport }): void {
  const { environment } = report;
  for (const s of report.mcp_servers?.servers ?? []) {
    if (s.status === "untrusted") {
      log.warn(`MCP server ${s.name} of environment ${environment} is not approved: not started`, {
        hint: `stn mcp approve ${s.name} --env ${environment} (or stn sync ${environment} --trust)`,
      });
    } else if (s.status === "failed") {
      log.warn(`MCP server ${s.name} of environment ${environment} failed`, { error: s.error?.message });
    }
  }
  for (const e of report.mcp_servers?.errors ?? []) {
    log.warn(`skipped invalid MCP config: ${e.file}${e.line ? `:${e.line}` : ""}: ${e.message}`);
  }
  for (const inv of report.agents?.invalid ?? []) {
    for (const line of formatInvalid(inv)) log.warn(`skipped invalid agent: ${line}`);
  }
  for (const inv of report.invalid) {
    for (const line of formatInvalid(inv)) log.warn(`skipped invalid workflow: ${line}`);
  }
  const n = (k: "created" | "updated" | "unchanged") => report[k].length;
  log.info(`synced environment ${environment}`, {
    created: n("created"),
    updated: n("updated"),
    unchanged: n("unchanged"),
    disabled: report.disabled.length,
    invalid: report.invalid.length,
    ...(report.mcp_servers ? { mcp_servers: report.mcp_servers.servers.length } : {}),
    ...(report.agents
      ? {
        agents: report.agents.created.length + report.agents.updated.length + report.agents.unchanged.length,
        agents_deleted: report.agents.deleted.length,
        agents_invalid: report.agents.invalid.length,
      }
      : {}),
  });
}
