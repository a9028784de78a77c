import { lazyImport } from "../lib/lazy_import.ts";
import { join, resolve } from "node:path";
import { StationClient } from "../client/http.ts";
import { installBundle } from "../client/environments.ts";
import { StationError, usageError } from "../errors.ts";
import { readLocalBytes } from "./local_files.ts";

/**
 * `stn up --bundle FILE`: the bundle is installed into the container's environments on the station's
 * first start, through its API (the same checks and sync as `stn bundle install`). Its MCP servers are
 * not started unless `--trust` approves them (as `bundle install --trust`), since naming a bundle is not
 * reading what it runs. Once its environment exists the bundle is left alone, so `up` again with the same
 * flags changes nothing.
 */

/** A bundle read and verified on the host, before anything starts. */
export interface UpBundle {
  file: string;
  bytes: Uint8Array;
  /** The environment it goes into: --bundle-env, else the bundle's name. */
  environment: string;
  /** Approve its MCP servers as written (--trust). */
  trust: boolean;
}

/** What `up` did with the bundle. */
export interface UpBundleResult {
  environment: string;
  /** false: the environment was already there (not the first start), nothing was written. */
  installed: boolean;
  files: string[];
  /** Variables still to set in the container's environment. */
  missing: string[];
  /** Its MCP servers not approved, so not started (`stn env trust <env>` approves them). */
  untrusted: string[];
}

/** Reads and checks the bundle; refuses it when the workspace's own environments/ are the station's. */
export async function readUpBundle(
  file: string,
  workspace: string,
  environment?: string,
  trust = false,
): Promise<UpBundle> {
  const dir = resolve(workspace);
  if (await Deno.stat(join(dir, "environments")).then((s) => s.isDirectory, () => false)) {
    throw usageError(
      "invalid_usage",
      `--bundle: the workspace ${dir} has environments/, which the station uses read-only`,
      "install the bundle there on the host (`stn bundle install FILE` with STATION_HOME pointing at it), " +
        "or run stn up from a workspace without environments/",
    );
  }
  const bytes = await readLocalBytes(file);
  const { readBundle } = await lazyImport<typeof import("../environments/bundle/unpack.ts")>(
    "../environments/bundle/unpack.ts",
    import.meta.url,
  ); // tar: only for --bundle
  const { manifest } = await readBundle(bytes);
  return { file, bytes, environment: environment ?? manifest.name, trust };
}

/** Installs the bundle into the running station unless its environment already exists. */
export async function installUpBundle(
  url: string,
  tokenFile: string,
  bundle: UpBundle,
): Promise<UpBundleResult> {
  const token = Deno.readTextFileSync(tokenFile).trim();
  // The install syncs the environment, which starts its MCP servers: more than a usual request's time.
  const client = new StationClient(url, { token, timeoutMs: 180_000 });
  try {
    const r = await installBundle(client, bundle.bytes, {
      environment: bundle.environment,
      trust: bundle.trust,
    });
    const untrusted = r.sync.mcp_servers.servers.filter((s) => s.status === "untrusted").map((s) => s.name);
    return { environment: r.environment, installed: true, files: r.files, missing: r.missing, untrusted };
  } catch (err) {
    if (!(err instanceof StationError) || err.code !== "environment_exists") throw err;
    return { environment: bundle.environment, installed: false, files: [], missing: [], untrusted: [] };
  }
}
