/** Installing a bundle: verified whole first, staged beside the target, then renamed into place. */

import { dirname, join } from "node:path";
import {
  type BundleManifest,
  type BundleServer,
  describeStored,
  type StationBundle,
} from "../../contract/bundles.ts";
import { StationError } from "../../errors.ts";
import { ENVIRONMENT_FOLDERS, type NeededVariable, neededVariables } from "../environments.ts";
import { exists, unsafePath } from "../files.ts";
import { parseMcpConfig, readMcpConfigs } from "../../environment_files/mcp_configs.ts";
import { environmentDir } from "../names.ts";
import { readVariables, requireVariableName, setVariable } from "../../environment_files/variables.ts";
import { readBundle } from "./unpack.ts";
import { makePrivateDir } from "../../lib/private_files.ts";
import { claimedWorkflowId } from "../../workflows/definition/source.ts";

/** Where a bundle goes: its environment's directory (present or not yet), and the stored workflows to look up. */
interface InstallTarget {
  dir: string;
  present: boolean;
  environment: string;
  stored?: (id: string) => StoredWorkflow | undefined;
}

/** What writing the bundle's files into the target's directory replaces. */
async function replacedBy(
  files: ReadonlyMap<string, Uint8Array>,
  { dir, present, environment, stored }: InstallTarget,
): Promise<Replaced> {
  const workflows: StoredWorkflow[] = [];
  const overwritten: string[] = [];
  for (const [path, bytes] of files) {
    if (path.startsWith("workflows/")) {
      const id = claimedWorkflowId(new TextDecoder().decode(bytes), path);
      const w = id === undefined ? undefined : stored?.(id);
      // One this environment's own files define is replaced as a file (below), not taken over.
      if (w && !(w.source === "file" && w.environment === environment)) workflows.push(w);
    }
    if (!present) continue;
    // Only a plain file is read (a FIFO would block; a link is refused later by the write).
    const isFile = await Deno.lstat(join(dir, path)).then((i) => i.isFile, () => false);
    const old = isFile ? await Deno.readFile(join(dir, path)) : undefined;
    if (old && (old.length !== bytes.length || old.some((b, i) => b !== bytes[i]))) overwritten.push(path);
  }
  return { workflows, files: overwritten.sort() };
}

/** A stored workflow a bundle's workflow of the same id takes over (ids are global to a station). */
export interface StoredWorkflow {
  id: string;
  version: number;
  source: "api" | "file";
  environment: string | null;
}

/** What an install replaces: stored workflows of other origins, and files of the target environment. */
export interface Replaced {
  workflows: StoredWorkflow[];
  /** Files of the existing environment (`force`) that the bundle writes over with other content. */
  files: string[];
}

/** What an install wrote and what the environment still needs. */
export interface Installed {
  environment: string;
  path: string;
  created: boolean;
  files: string[];
  manifest: BundleManifest;
  /** The bundle's MCP servers with what each really launches (never the manifest's claim). */
  servers: BundleServer[];
  replaced: Replaced;
  variables: NeededVariable[];
  missing: string[];
  /** Set for a bundle in Station's layout: what was converted and left out. */
  station?: StationBundle;
}

export interface InstallOptions {
  /** Target environment; default the bundle's name. */
  environment?: string;
  /**
   * Install into an existing environment, replacing the bundle's files (its variables.yml is kept), and
   * take over stored workflows of the same ids; without it either is refused and nothing is written.
   */
  force?: boolean;
  /** The stored workflow of an id, if any (to find what the install would take over). */
  storedWorkflow?: (id: string) => StoredWorkflow | undefined;
  /** Where variable values may also come from (the process environment). */
  env?: (name: string) => string | undefined;
  /** Values to write into the environment's variables.yml (`--var NAME=VALUE`). */
  variables?: Record<string, string>;
  /** Refuse, writing nothing, while a variable the bundle's configs use has no value. */
  requireVariables?: boolean;
}

/** 400 `bundle_variables_missing` unless every variable the bundle's configs use will have a value. */
async function requireValues(
  files: ReadonlyMap<string, Uint8Array>,
  target: { dir: string; present: boolean },
  options: InstallOptions,
): Promise<void> {
  const configs = [...files].filter(([p]) => !p.startsWith("agents/") && !p.startsWith("workflows/"))
    .map(([p, b]) => parseMcpConfig(p, new TextDecoder().decode(b)));
  const known = { ...(target.present ? await readVariables(target.dir) : {}), ...options.variables };
  const missing = neededVariables(configs, known, options.env ?? ((n) => Deno.env.get(n)))
    .filter((v) => v.source === "missing").map((v) => v.name);
  if (!missing.length) return;
  throw new StationError(
    "bundle_variables_missing",
    `the bundle's MCP configs use variables without a value: ${missing.join(", ")}; nothing was installed`,
    {
      hint: `pass ${missing.map((n) => `--var ${n}=…`).join(" ")} (or run on a terminal to be asked), or ` +
        "--defer-variables to install now and set them later with `stn env vars set`",
      details: { missing },
    },
  );
}

/** Refuses to write through a folder of the target that is a link (it could point anywhere). */
async function requirePlainFolders(dir: string, files: Iterable<string>): Promise<void> {
  const folders = new Set([...files].map((f) => dirname(f)).filter((d) => d !== "."));
  for (const folder of folders) {
    try {
      if ((await Deno.lstat(join(dir, folder))).isSymlink) {
        throw unsafePath(folder, "a link in the target environment");
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}

/**
 * Installs a bundle: verifies all of it first (readBundle), writes every file into a hidden staging folder
 * beside the target, then renames the folder into place (new environment) or each file over its old
 * version (`force`), so a refused or failed install writes nothing into the environment.
 */
export async function installBundle(
  environmentsDir: string,
  bytes: Uint8Array,
  options: InstallOptions = {},
): Promise<Installed> {
  const { manifest, files, servers, station } = await readBundle(bytes);
  const name = options.environment ?? manifest.name;
  const dir = environmentDir(environmentsDir, name);
  const present = await exists(dir);
  if (present && !options.force) {
    throw new StationError("environment_exists", `environment \`${name}\` already exists (${dir})`, {
      hint: "install into a new environment (`stn bundle install FILE <env>`), or pass --force to replace " +
        "the bundle's files in this one (its variables.yml is kept)",
    });
  }
  const replaced = await replacedBy(files, {
    dir,
    present,
    environment: name,
    stored: options.storedWorkflow,
  });
  if (replaced.workflows.length && !options.force) {
    const list = replaced.workflows.map(describeStored).join("; ");
    throw new StationError(
      "bundle_conflict",
      `the bundle would replace ${list}; nothing was installed`,
      {
        hint:
          "workflow ids are global to a station: pass --force to let the bundle's environment take them " +
          "over (a new version of each), or install the bundle on another station",
        details: { workflows: replaced.workflows },
      },
    );
  }
  if (present) await requirePlainFolders(dir, files.keys());
  const given = Object.entries(options.variables ?? {});
  for (const [n] of given) requireVariableName(n);
  if (options.requireVariables) await requireValues(files, { dir, present }, options);
  makePrivateDir(environmentsDir);
  const staging = await Deno.makeTempDir({ dir: environmentsDir, prefix: ".install-" });
  try {
    for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(staging, f));
    for (const [path, content] of files) {
      await Deno.mkdir(join(staging, dirname(path)), { recursive: true });
      await Deno.writeFile(join(staging, path), content, { mode: 0o644 });
    }
    if (!present) {
      for (const [n, v] of given) await setVariable(staging, n, v);
      await Deno.chmod(staging, 0o755);
      await Deno.rename(staging, dir);
    } else {
      for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(dir, f), { recursive: true });
      for (const path of files.keys()) await Deno.rename(join(staging, path), join(dir, path));
      await Deno.remove(staging, { recursive: true });
      for (const [n, v] of given) await setVariable(dir, n, v);
    }
  } catch (err) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  }
  const variables = neededVariables(
    await readMcpConfigs(dir),
    await readVariables(dir),
    options.env ?? ((n) => Deno.env.get(n)),
  );
  return {
    environment: name,
    path: dir,
    created: !present,
    files: [...files.keys()].sort(),
    manifest,
    servers,
    replaced,
    variables,
    missing: variables.filter((v) => v.source === "missing").map((v) => v.name),
    ...(station ? { station } : {}),
  };
}
