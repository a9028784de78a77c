/** Installing a bundle: verified whole first, staged beside the target, then renamed into place. */

import { dirname, join } from "node:path";
import type { BundleManifest } from "../../contract/bundles.ts";
import { StationError } from "../../errors.ts";
import { ENVIRONMENT_FOLDERS, type NeededVariable, neededVariables } from "../environments.ts";
import { exists, unsafePath } from "../files.ts";
import { readMcpConfigs } from "../mcp_configs.ts";
import { environmentDir } from "../names.ts";
import { readVariables } from "../variables.ts";
import { readBundle } from "./unpack.ts";
import { makePrivateDir } from "../../lib/private_files.ts";

/** What an install wrote and what the environment still needs. */
export interface Installed {
  environment: string;
  path: string;
  created: boolean;
  files: string[];
  manifest: BundleManifest;
  variables: NeededVariable[];
  missing: string[];
}

export interface InstallOptions {
  /** Target environment; default the bundle's name. */
  environment?: string;
  /** Install into an existing environment, replacing the bundle's files (its variables.yml is kept). */
  force?: boolean;
  /** Where variable values may also come from (the process environment). */
  env?: (name: string) => string | undefined;
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
  const { manifest, files } = await readBundle(bytes);
  const name = options.environment ?? manifest.name;
  const dir = environmentDir(environmentsDir, name);
  const present = await exists(dir);
  if (present && !options.force) {
    throw new StationError("environment_exists", `environment \`${name}\` already exists (${dir})`, {
      hint: "install into a new environment (`stn bundle install FILE <env>`), or pass --force to replace " +
        "the bundle's files in this one (its variables.yml is kept)",
    });
  }
  if (present) await requirePlainFolders(dir, files.keys());
  makePrivateDir(environmentsDir);
  const staging = await Deno.makeTempDir({ dir: environmentsDir, prefix: ".install-" });
  try {
    for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(staging, f));
    for (const [path, content] of files) {
      await Deno.mkdir(join(staging, dirname(path)), { recursive: true });
      await Deno.writeFile(join(staging, path), content, { mode: 0o644 });
    }
    if (!present) {
      await Deno.chmod(staging, 0o755);
      await Deno.rename(staging, dir);
    } else {
      for (const f of ENVIRONMENT_FOLDERS) await Deno.mkdir(join(dir, f), { recursive: true });
      for (const path of files.keys()) await Deno.rename(join(staging, path), join(dir, path));
      await Deno.remove(staging, { recursive: true });
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
    variables,
    missing: variables.filter((v) => v.source === "missing").map((v) => v.name),
  };
}
