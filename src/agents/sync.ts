import { transaction } from "../db/database.ts";
import type { Database } from "../db/database.ts";
import type { ValidationIssue } from "../workflows/definition/validate.ts";
import { agentsChanged } from "./changes.ts";
import { loadAgentsFolder } from "./definition/mod.ts";
import { deleteAgent, putAgent, storedDefinitions } from "./store.ts";

/**
 * DeclarativeSync of an environment's agents: makes the agents table match `agents/*.prompt` (the
 * filesystem is the source of truth). A valid file is stored when its definition changed; an invalid
 * one is reported and its stored agent left as it was; an agent whose file is gone is deleted. All
 * of it is one transaction, so a failure stores nothing.
 */

/** One synced agent. */
export interface SyncedAgent {
  name: string;
  file: string;
}

/** What an agent sync did, per outcome (the `agents` section of the sync report). */
export interface AgentSyncReport {
  directory: string;
  created: SyncedAgent[];
  updated: SyncedAgent[];
  unchanged: SyncedAgent[];
  /** Agents deleted because their file is gone. */
  deleted: string[];
  invalid: { file: string; errors: ValidationIssue[] }[];
  /** Files that loaded with warnings (unknown keys, a model without a provider, …). */
  warnings: { file: string; warnings: ValidationIssue[] }[];
}

export interface SyncAgentsOptions {
  /** The environment's MCP tools (exposed name → server); without it `tools` are not checked. */
  knownTools?: ReadonlyMap<string, string>;
  /** MCP servers not discovered yet: a tool missing from the catalogue is a warning while any is. */
  pendingServers?: readonly string[];
  /** `agents.default_max_steps`, when configured. */
  defaultMaxSteps?: number;
}

/** Syncs `directory` (an environment's agents folder) into the agents table. */
export async function syncAgents(
  db: Database,
  target: { environment: string; directory: string },
  options: SyncAgentsOptions = {},
): Promise<AgentSyncReport> {
  const { environment, directory } = target;
  const loaded = await loadAgentsFolder(directory, { environment, ...options });
  const report: AgentSyncReport = {
    directory,
    created: [],
    updated: [],
    unchanged: [],
    deleted: [],
    invalid: [],
    warnings: [],
  };
  let dropped = false;
  transaction(db, () => {
    const stored = storedDefinitions(db, environment);
    const now = new Date().toISOString();
    for (const agent of loaded) {
      if (agent.warnings.length) report.warnings.push({ file: agent.path, warnings: agent.warnings });
      if (!agent.definition) {
        report.invalid.push({ file: agent.path, errors: agent.errors });
        // Its last good version must not stay runnable: `agent list` shows the agent as invalid instead.
        if (stored.has(agent.name)) deleteAgent(db, environment, agent.name), dropped = true;
        continue;
      }
      const entry = { name: agent.name, file: agent.path };
      const before = stored.get(agent.name);
      if (before === JSON.stringify(agent.definition)) {
        report.unchanged.push(entry);
        continue;
      }
      putAgent(db, agent.definition, now);
      report[before === undefined ? "created" : "updated"].push(entry);
    }
    const present = new Set(loaded.map((a) => a.name));
    for (const name of stored.keys()) {
      if (present.has(name)) continue;
      deleteAgent(db, environment, name);
      report.deleted.push(name);
    }
  });
  if (report.created.length || report.updated.length || report.deleted.length || dropped) agentsChanged(db);
  return report;
}
