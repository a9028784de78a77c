import { join } from "node:path";
import { type AgentSyncReport, syncAgents, type SyncAgentsOptions } from "../agents/sync.ts";
import { listAgents } from "../agents/store.ts";
import type { Database } from "../db/database.ts";
import { formatInvalid, type InvalidFile } from "./definition/format.ts";
import type { LoadedConfig } from "../config/load.ts";
import { environmentDir } from "../environments/names.ts";
import { StationError } from "../errors.ts";
import { log } from "../log.ts";
import { agentReferenceIssues } from "./definition/agent_refs.ts";
import { imageIssues } from "./definition/references.ts";
import type { Config } from "../config/schema.ts";
import { idFromFileName, WORKFLOW_FILE } from "./definition/file_name.ts";
import { validateSource } from "./definition/load.ts";
import { claimedWorkflowId } from "./definition/source.ts";
import type { WorkflowStore } from "./store.ts";

/**
 * DeclarativeSync: makes the stored workflows match `environments/<env>/workflows/*.workflow.*`.
 * Valid files are saved (a new version only when content changed); invalid files are reported and
 * skipped, leaving their stored workflow as it was; workflows that came from this environment's
 * files and whose file is gone are disabled — never workflows from the API or another environment.
 */

/** One synced workflow. */
export interface SyncedWorkflow {
  id: string;
  version: number;
  file: string;
}

/** What a sync did, per outcome. */
export interface SyncReport {
  environment: string;
  directory: string;
  created: SyncedWorkflow[];
  updated: SyncedWorkflow[];
  unchanged: SyncedWorkflow[];
  /** Workflows re-enabled because their file is back (also listed in created/updated/unchanged). */
  enabled: string[];
  disabled: string[];
  invalid: InvalidFile[];
  /** The environment's agents, synced first (when the caller gave the ledger). */
  agents?: AgentSyncReport;
}

/** The workflows folder of an environment. */
export function environmentWorkflowsDir(environmentsDir: string, environment: string): string {
  return join(environmentsDir, environment, "workflows");
}

/**
 * Syncs one environment's files: its agents (given the ledger `db`; `agents` tunes their checks), then its
 * workflows (their sandbox images checked against `sandbox`, when given).
 */
export async function syncEnvironment(
  store: WorkflowStore,
  environmentsDir: string,
  environment: string,
  options: { db?: Database; agents?: SyncAgentsOptions; sandbox?: Config["sandbox"] } = {},
): Promise<SyncReport> {
  const envDir = environmentDir(environmentsDir, environment);
  try {
    if (!(await Deno.stat(envDir)).isDirectory) throw new Deno.errors.NotFound();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    throw new StationError(
      "environment_not_found",
      `no environment \`${environment}\` (${envDir} does not exist)`,
      {
        status: 404,
        hint: `create ${join(envDir, "workflows")} and put <id>.workflow.yaml files in it`,
      },
    );
  }
  const directory = environmentWorkflowsDir(environmentsDir, environment);
  const report: SyncReport = {
    environment,
    directory,
    created: [],
    updated: [],
    unchanged: [],
    enabled: [],
    disabled: [],
    invalid: [],
  };
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(directory)) {
      if ((e.isFile || e.isSymlink) && WORKFLOW_FILE.test(e.name)) files.push(e.name);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  files.sort();
  const { db } = options;
  if (db) {
    report.agents = await syncAgents(db, { environment, directory: join(envDir, "agents") }, options.agents);
  }
  // With the agents synced, an agent step naming one that does not exist is an error.
  const agentsOf = (env: string) => db ? listAgents(db, env).map((a) => a.definition.name) : undefined;

  const present = new Set<string>();
  const seenIn = new Map<string, string>();
  for (const name of files) {
    const file = join(directory, name);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      const id = idFromFileName(file);
      if (id) present.add(id); // unreadable is not removed: keep its stored workflow as it is
      report.invalid.push({
        file,
        errors: [{
          code: "file_unreadable",
          path: "/",
          message: `cannot read the file: ${(err as Error).message}`,
          hint: "check its permissions (and, for a symlink, its target)",
        }],
      });
      continue;
    }
    const result = validateSource(text, { fileName: file });
    if (result.valid) result.errors.push(...agentReferenceIssues(text, environment, agentsOf));
    if (result.valid && options.sandbox) {
      result.errors.push(...imageIssues(result.definition!, options.sandbox));
    }
    if (result.errors.length || !result.definition) {
      const id = claimedWorkflowId(text, file);
      if (id) present.add(id);
      report.invalid.push({ file, errors: result.errors });
      continue;
    }
    const def = result.definition;
    const other = seenIn.get(def.id);
    if (other) {
      report.invalid.push({
        file,
        errors: [{
          code: "duplicate_workflow_id",
          path: "/id",
          message: `workflow id \`${def.id}\` is also defined in ${other}`,
          hint: "each workflow id lives in one file per environment",
        }],
      });
      continue;
    }
    seenIn.set(def.id, file);
    present.add(def.id);
    const saved = store.save(def, { source: "file", environment, path: file });
    report[saved.outcome].push({ id: def.id, version: saved.version, file });
    if (saved.enabled) report.enabled.push(def.id);
  }

  for (const w of store.list({ environment, status: "active" })) {
    if (present.has(w.id)) continue;
    store.disable(w.id, "file_removed");
    report.disabled.push(w.id);
  }
  return report;
}

/** Station start: syncs the configured environment when it exists; problems are logged, never fatal. */
export async function syncOnStart(
  store: WorkflowStore,
  config: LoadedConfig,
  db?: Database,
): Promise<SyncReport | undefined> {
  const environment = config.values.workflows.environment;
  try {
    const report = await syncEnvironment(store, config.paths.environments, environment, {
      db,
      sandbox: config.values.sandbox,
    });
    for (const inv of report.agents?.invalid ?? []) {
      for (const line of formatInvalid(inv)) log.warn(`skipped invalid agent: ${line}`);
    }
    for (const inv of report.invalid) {
      for (const line of formatInvalid(inv)) log.warn(`skipped invalid workflow: ${line}`);
    }
    const n = (k: "created" | "updated" | "unchanged") => report[k].length;
    log.info(`synced workflows of environment ${environment}`, {
      created: n("created"),
      updated: n("updated"),
      unchanged: n("unchanged"),
      disabled: report.disabled.length,
      invalid: report.invalid.length,
      ...(report.agents
        ? {
          agents: report.agents.created.length + report.agents.updated.length +
            report.agents.unchanged.length,
          agents_deleted: report.agents.deleted.length,
          agents_invalid: report.agents.invalid.length,
        }
        : {}),
    });
    return report;
  } catch (err) {
    if (err instanceof StationError && err.code === "environment_not_found") {
      log.debug(`no environment ${environment} to sync workflows from`);
      return undefined;
    }
    log.warn("workflow sync at start failed", { error: (err as Error).message });
    return undefined;
  }
}
