import { join } from "node:path";
import { type AgentSyncReport, syncAgents, type SyncAgentsOptions } from "../agents/sync.ts";
import { listAgents } from "../agents/store.ts";
import { agentNameFromFile, firstProblem } from "../agents/definition/mod.ts";
import type { Database } from "../db/database.ts";
import type { InvalidFile } from "../workflows/definition/format.ts";
import { environmentDir } from "./names.ts";
import { errorMessage, StationError } from "../errors.ts";
import { agentReferenceIssues } from "../workflows/definition/agent_refs.ts";
import { idFromFileName, WORKFLOW_FILE } from "../workflows/definition/file_name.ts";
import { validateSource } from "../workflows/definition/load.ts";
import { claimedWorkflowId } from "../workflows/definition/source.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import { imageIssues } from "../workflows/definition/references.ts";
import type { Config } from "../config/schema.ts";

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
  // An agent this sync refused is named with its first problem, not as missing.
  const refused = new Map(
    (report.agents?.invalid ?? []).map((
      i,
    ) => [agentNameFromFile(i.file), firstProblem({ path: i.file, ...i })]),
  );
  const invalidAgent = (env: string, name: string) => env === environment ? refused.get(name) : undefined;

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
          message: `cannot read the file: ${errorMessage(err)}`,
          hint: "check its permissions (and, for a symlink, its target)",
        }],
      });
      continue;
    }
    const result = validateSource(text, { fileName: file });
    if (result.valid) result.errors.push(...agentReferenceIssues(text, environment, agentsOf, invalidAgent));
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
