import { dirname, join } from "node:path";
import { StationError } from "../errors.ts";
import { idFromFileName, WORKFLOW_FILE } from "../workflows/definition/file_name.ts";
import { ENVIRONMENT_NAME, environmentDir, requireEnvironment } from "./names.ts";
import { exists, folderFiles } from "./files.ts";
import { type McpConfigFile, readMcpConfigs } from "../environment_files/mcp_configs.ts";
import { isSecretName } from "../environment_files/secrets.ts";
import { readVariables } from "../environment_files/variables.ts";
import { makePrivateDir } from "../lib/private_files.ts";

/**
 * Environments as folders (docs/design/agents.md#environments): list, show, create, copy, delete. The folder
 * is the source of truth; nothing here touches the ledger except through the caller (delete disables the
 * workflows the environment's files defined).
 */

/** The sub-folders every environment has. */
export const ENVIRONMENT_FOLDERS = ["agents", "mcp-configs", "workflows"] as const;

/** A variable an environment's MCP configs ask for, and where its value would come from. */
export interface NeededVariable {
  name: string;
  secret: boolean;
  /** `variables.yml`, the process environment, or nowhere. */
  source: "variables.yml" | "environment" | "missing";
  /** The MCP config files that use it. */
  used_by: string[];
}

/** Everything `stn env show` prints. */
export interface EnvironmentDetails {
  name: string;
  path: string;
  agents: { name: string; file: string }[];
  mcp_configs: McpConfigFile[];
  workflows: { id: string | null; file: string }[];
  variables: NeededVariable[];
  /** Names of the needed variables that have no value. */
  missing: string[];
}

/** One line of `stn env list`. */
export interface EnvironmentSummary {
  name: string;
  path: string;
  agents: number;
  mcp_servers: number;
  workflows: number;
  missing_variables: number;
  /** Why the environment could not be read, when it could not. */
  error?: string;
}

/** Names of the entries of `dir` matching `pattern`: files (and links) or folders. */
async function names(dir: string, pattern: RegExp, kind: "file" | "folder" = "file"): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      const wanted = kind === "folder" ? e.isDirectory : e.isFile || e.isSymlink;
      if (wanted && pattern.test(e.name)) out.push(e.name);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out.sort();
}

/** Which variables the configs need and whether each has a value (variables.yml, then `env`). */
export function neededVariables(
  configs: McpConfigFile[],
  values: Record<string, string>,
  env: (name: string) => string | undefined,
): NeededVariable[] {
  const usedBy = new Map<string, string[]>();
  for (const c of configs) for (const v of c.variables) usedBy.set(v, [...usedBy.get(v) ?? [], c.file]);
  return [...usedBy.keys()].sort().map((name) => ({
    name,
    secret: isSecretName(name),
    source: Object.hasOwn(values, name)
      ? "variables.yml"
      : env(name) !== undefined
      ? "environment"
      : "missing",
    used_by: usedBy.get(name)!,
  }));
}

/** The agents, MCP configs, workflows and needed variables of an existing environment. */
export async function showEnvironment(
  environmentsDir: string,
  name: string,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<EnvironmentDetails> {
  const dir = await requireEnvironment(environmentsDir, name);
  const configs = await readMcpConfigs(dir);
  const variables = neededVariables(configs, await readVariables(dir), env);
  return {
    name,
    path: dir,
    agents: (await names(join(dir, "agents"), /\.prompt$/)).map((f) => ({
      name: f.replace(/\.prompt$/, ""),
      file: `agents/${f}`,
    })),
    mcp_configs: configs,
    workflows: (await names(join(dir, "workflows"), WORKFLOW_FILE)).map((f) => ({
      id: idFromFileName(f) ?? null,
      file: `workflows/${f}`,
    })),
    variables,
    missing: variables.filter((v) => v.source === "missing").map((v) => v.name),
  };
}

/** Every environment folder, with counts. */
export async function listEnvironments(
  environmentsDir: string,
  env?: (name: string) => string | undefined,
): Promise<EnvironmentSummary[]> {
  const out: EnvironmentSummary[] = [];
  for (const name of await names(environmentsDir, ENVIRONMENT_NAME, "folder")) {
    let d: EnvironmentDetails;
    try {
      d = await showEnvironment(environmentsDir, name, env);
    } catch (err) {
      // One broken environment (a bad variables.yml) must not hide the others: it is listed with why.
      if (!(err instanceof StationError)) throw err;
      const path = join(environmentsDir, name);
      out.push({
        name,
        path,
        agents: 0,
        mcp_servers: 0,
        workflows: 0,
        missing_variables: 0,
        error: err.message,
      });
      continue;
    }
    out.push({
      name,
      path: d.path,
      agents: d.agents.length,
      mcp_servers: d.mcp_configs.reduce((n, c) => n + c.servers.length, 0),
      workflows: d.workflows.length,
      missing_variables: d.missing.length,
    });
  }
  return out;
}

function alreadyExists(name: string, dir: string): StationError {
  return new StationError("environment_exists", `environment \`${name}\` already exists (${dir})`, {
    hint: `choose another name, or \`stn env delete ${name}\` first`,
  });
}

/** The names of the environment folders, sorted. */
export function environmentNames(environmentsDir: string): Promise<string[]> {
  return names(environmentsDir, ENVIRONMENT_NAME, "folder");
}

/**
 * Creates environment `name` empty, as private (0700) folders like the rest of the home, when it does
 * not exist; true when it did. An existing one is left as it is.
 */
export async function ensureEnvironment(environmentsDir: string, name: string): Promise<boolean> {
  const dir = environmentDir(environmentsDir, name);
  if (await exists(dir)) return false;
  for (const f of ENVIRONMENT_FOLDERS) makePrivateDir(join(dir, f));
  return true;
}

/** Creates an empty environment (its agents/, mcp-configs/ and workflows/ folders); 409 when it exists. */
export async function createEnvironment(environmentsDir: string, name: string): Promise<string> {
  const dir = environmentDir(environmentsDir, name);
  if (await exists(dir)) throw alreadyExists(name, dir);
  makePrivateDir(environmentsDir);
  const staging = await Deno.makeTempDir({ dir: environmentsDir, prefix: ".create-" });
  try {
    for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(staging, f));
    await Deno.chmod(staging, 0o755);
    await Deno.rename(staging, dir);
  } catch (err) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  }
  return dir;
}

/**
 * Copies an environment, variables.yml included (both are on this machine), into a new one: written
 * to a hidden folder first and renamed, so a failure leaves no half environment.
 */
export async function copyEnvironment(environmentsDir: string, from: string, to: string): Promise<string> {
  const source = await requireEnvironment(environmentsDir, from);
  const target = environmentDir(environmentsDir, to);
  if (await exists(target)) throw alreadyExists(to, target);
  const files = await folderFiles(source);
  const staging = await Deno.makeTempDir({ dir: environmentsDir, prefix: ".copy-" });
  try {
    for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(staging, f));
    for (const f of files) {
      const dest = join(staging, f.path);
      await Deno.mkdir(dirname(dest), { recursive: true });
      await Deno.copyFile(f.abs, dest);
      await Deno.chmod(dest, f.mode);
    }
    await Deno.chmod(staging, 0o755);
    await Deno.rename(staging, target);
  } catch (err) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  }
  return target;
}

/** Deletes an environment folder and everything in it. */
export async function deleteEnvironment(environmentsDir: string, name: string): Promise<string> {
  const dir = await requireEnvironment(environmentsDir, name);
  await Deno.remove(dir, { recursive: true });
  return dir;
}
