/**
 * `stn import station`: brings a Station home into stn — its environment folders copied (new files only),
 * agents and workflows that live only in Station's database written out as files — and reports what does not
 * carry over. Station's own files are only read (docs/migrating-from-station.md#the-database).
 */

import { dirname, join, resolve } from "node:path";
import { stringify } from "yaml";
import { usageError } from "../errors.ts";
import { ledgerOwner } from "../lib/ledger_owner.ts";
import { parseYaml, yamlData } from "../lib/yaml.ts";
import { exists, folderFiles } from "./files.ts";
import { readStationDb, type StationAgent, type StationData, type StationWorkflow } from "./station_db.ts";

/** What was done (or, with dry_run, would be done) for one environment. */
export interface EnvironmentImport {
  name: string;
  /** stn's folder of the environment. */
  folder: string;
  /** Station's folder is stn's (one home for both): its files are read where they are, nothing is copied. */
  shared: boolean;
  copied: string[];
  /** Files stn's folder has already, left as they are. */
  kept: string[];
  agents_written: string[];
  workflows_written: string[];
}

/** Something of Station's that stn does not bring over, and why. */
export interface NotImported {
  what: string;
  count: number;
  why: string;
}

/** The report of `stn import station`. */
export interface StationImport {
  home: string;
  database: string;
  schema_version: number;
  dry_run: boolean;
  environments: EnvironmentImport[];
  not_imported: NotImported[];
}

const WORKFLOW_FILE = /^(.+)\.workflow\.(ya?ml|json)$/;
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Station's database of a home: `database_url` of its config.yaml when that names a file, else station.db. */
async function stationDbPath(home: string): Promise<string> {
  const text = await Deno.readTextFile(join(home, "config.yaml")).catch(() => "");
  const doc = parseYaml(text);
  let url: unknown;
  try {
    url = doc.errors.length ? undefined : (yamlData(doc) as { database_url?: unknown } | null)?.database_url;
  } catch {
    url = undefined;
  }
  // libsql:// and http(s):// databases are remote (Turso): only a local file can be read.
  if (typeof url === "string" && url && !/^[a-z]+:\/\//.test(url)) return resolve(home, url);
  return join(home, "station.db");
}

/** An agent of Station's database as a .prompt file stn reads. */
export function agentPromptFile(agent: StationAgent): string {
  const front: Record<string, unknown> = {
    metadata: { name: agent.name, ...(agent.description ? { description: agent.description } : {}) },
    ...(agent.max_steps ? { max_steps: agent.max_steps } : {}),
    ...(agent.tools.length ? { tools: agent.tools.map((t) => t.startsWith("__") ? t : `__${t}`) } : {}),
  };
  const schema = agent.input_schema ? JSON.parse(agent.input_schema) : undefined;
  if (schema && typeof schema === "object") front.input = { schema };
  if (agent.output_schema) front.output_schema = agent.output_schema;
  if (agent.cron_schedule) front.schedule = { cron: agent.cron_schedule, enabled: false };
  return `---\n${
    stringify(front)
  }---\n{{role "system"}}\n${agent.prompt.trimEnd()}\n\n{{role "user"}}\n{{userInput}}\n`;
}

/** A workflow of Station's database as a workflow file, with a comment saying where it came from. */
export function workflowFile(w: StationWorkflow): string {
  const definition = JSON.parse(w.definition) as Record<string, unknown>;
  const data = {
    id: w.workflow_id,
    name: w.name,
    ...(w.description ? { description: w.description } : {}),
    ...definition,
  };
  return `# From Station's database (version ${w.version}), written by \`stn import station\`.\n` +
    "# Check it with `stn workflow validate`; `stn workflow migrate` converts Station's expressions.\n" +
    stringify(data);
}

async function writeNew(path: string, text: string, mode = 0o644): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, text, { createNew: true, mode });
}

async function copyFolder(
  from: string,
  to: string,
  report: EnvironmentImport,
  dryRun: boolean,
): Promise<void> {
  if (!(await exists(from))) return;
  for (const f of await folderFiles(from)) {
    const target = join(to, f.path);
    if (await exists(target)) {
      report.kept.push(f.path);
      continue;
    }
    report.copied.push(f.path);
    if (dryRun) continue;
    await Deno.mkdir(dirname(target), { recursive: true });
    await Deno.writeFile(target, await Deno.readFile(f.abs), { createNew: true, mode: f.mode });
  }
}

async function workflowIds(dirs: string[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const dir of dirs) {
    if (!(await exists(dir))) continue;
    for await (const e of Deno.readDir(dir)) {
      const m = WORKFLOW_FILE.exec(e.name);
      if (m) ids.add(m[1]);
    }
  }
  return ids;
}

async function importEnvironment(
  name: string,
  data: StationData,
  dirs: { station: string; stn: string },
  dryRun: boolean,
): Promise<EnvironmentImport> {
  const from = join(dirs.station, name);
  const to = join(dirs.stn, name);
  const shared = resolve(from) === resolve(to);
  const report: EnvironmentImport = {
    name,
    folder: to,
    shared,
    copied: [],
    kept: [],
    agents_written: [],
    workflows_written: [],
  };
  if (!shared) await copyFolder(from, to, report, dryRun);
  for (const agent of data.agents.filter((a) => a.environment === name && SAFE_NAME.test(a.name))) {
    const file = join("agents", `${agent.name}.prompt`);
    if ((await exists(join(from, file))) || (await exists(join(to, file)))) continue;
    report.agents_written.push(file);
    if (!dryRun) await writeNew(join(to, file), agentPromptFile(agent));
  }
  // Station's workflows table has no environment: they join the default one, as Station's loader read them.
  if (name !== "default") return report;
  const present = await workflowIds([join(from, "workflows"), join(to, "workflows")]);
  for (
    const w of data.workflows.filter((w) => SAFE_NAME.test(w.workflow_id) && !present.has(w.workflow_id))
  ) {
    const file = join("workflows", `${w.workflow_id}.workflow.yaml`);
    report.workflows_written.push(file);
    if (!dryRun) await writeNew(join(to, file), workflowFile(w));
  }
  return report;
}

function notImported(data: StationData): NotImported[] {
  const out: NotImported[] = [];
  const history = "stn starts its own history; Station's stays in its database";
  if (data.agent_runs.total) out.push({ what: "agent runs", count: data.agent_runs.total, why: history });
  if (data.workflow_runs.total) {
    out.push({ what: "workflow runs", count: data.workflow_runs.total, why: history });
  }
  const unsafe = data.agents.filter((a) => !SAFE_NAME.test(a.name)).length +
    data.workflows.filter((w) => !SAFE_NAME.test(w.workflow_id)).length;
  if (unsafe) {
    out.push({
      what: "agents and workflows",
      count: unsafe,
      why: "their names are not file names: write them by hand",
    });
  }
  const why: Record<string, string> = {
    users: "stn has no users: off loopback it asks for server.api_token",
    settings: "Station's settings have no stn equivalent",
    workflow_schedules: "a workflow's schedule is its cron start state in stn (docs/workflows.md)",
    workflow_approvals: "approvals belong to Station's runs",
    reports: "stn has no reports",
    benchmark_tasks: "stn has no benchmarks; `stn test` checks agents and workflows (docs/testing.md)",
    faker_sessions: "stn mock serves tools from a spec file (docs/testing.md#mock-mcp-servers)",
    notification_logs: "stn sends no notifications",
  };
  for (const [table, count] of Object.entries(data.other_rows)) {
    out.push({ what: table, count, why: why[table] });
  }
  return out;
}

/** Imports the Station home `stationHome` into the environments folder of stn's home. */
export async function importStation(
  stationHome: string,
  stnEnvironments: string,
  options: { dryRun: boolean },
): Promise<StationImport> {
  const database = await stationDbPath(stationHome);
  const owner = ledgerOwner(database);
  if (owner === "absent") {
    throw usageError(
      "invalid_usage",
      `${database}: no Station database there`,
      "give Station's home with --home DIR",
    );
  }
  if (owner === "stn") {
    throw usageError(
      "invalid_usage",
      `${database} is stn's own ledger, not Station's`,
      "give Station's home with --home DIR",
    );
  }
  const data = readStationDb(database);
  const stationEnvironments = join(stationHome, "environments");
  const names = new Set(data.environments);
  if (await exists(stationEnvironments)) {
    for await (const e of Deno.readDir(stationEnvironments)) if (e.isDirectory) names.add(e.name);
  }
  const environments: EnvironmentImport[] = [];
  for (const name of [...names].filter((n) => SAFE_NAME.test(n)).sort()) {
    environments.push(
      await importEnvironment(
        name,
        data,
        { station: stationEnvironments, stn: stnEnvironments },
        options.dryRun,
      ),
    );
  }
  return {
    home: stationHome,
    database,
    schema_version: data.schema_version,
    dry_run: options.dryRun,
    environments,
    not_imported: notImported(data),
  };
}
