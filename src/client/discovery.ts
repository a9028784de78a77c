/** Finding the server a CLI command talks to: --station, STATION_URL, a live server.json, else none. */

import type { StationPaths } from "../config/paths.ts";
import { usageError } from "../errors.ts";
import { readServerFile } from "../config/server_file.ts";

/**
 * Where a CLI command's server comes from, in the order they are tried
 * (docs/design/process-model.md#finding-a-server).
 */
export type TargetSource = "flag" | "env" | "server.json" | "embedded";

export interface Target {
  source: TargetSource;
  /** The server's URL; absent for embedded mode, which starts one in-process. */
  url?: string;
  /** The token a `stn up` container wants (from the file its server.json names). */
  token?: string;
  /** The `stn up` container serving url. */
  container?: string;
}

export interface DiscoverOptions {
  /** --station URL */
  station?: string;
  env?: Record<string, string | undefined>;
  paths: StationPaths;
}

/** True when something answers /health at the URL (any status: a degraded server is still a server). */
export async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1500) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/**
 * A server address as users type it, as a base URL: `host:port` (or a bare host) means `http://host:port`;
 * anything that is not an http(s) URL with a host is a usage error that says what was wrong.
 */
export function stationUrl(raw: string, from: "--station" | "STATION_URL"): string {
  const text = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch { /* reported below */ }
  if (!url || !["http:", "https:"].includes(url.protocol) || !url.hostname || url.search || url.hash) {
    throw usageError(
      "invalid_station_url",
      `${from} ${JSON.stringify(raw)} is not a server address`,
      "give http://host:port, https://host or host:port, e.g. --station localhost:8585",
    );
  }
  return url.href.replace(/\/+$/, "");
}

/** The token in the file a server.json names (a `stn up` station's), if it can be read. */
function readTokenFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return Deno.readTextFileSync(path).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Resolves the server to talk to: --station, STATION_URL, a live server.json, else embedded. */
export async function discoverTarget(options: DiscoverOptions): Promise<Target> {
  const env = options.env ?? Deno.env.toObject();
  if (options.station) return { source: "flag", url: stationUrl(options.station, "--station") };
  if (env.STATION_URL) return { source: "env", url: stationUrl(env.STATION_URL, "STATION_URL") };
  const file = readServerFile(options.paths.serverJson);
  // A server.json left by a crashed server is stale: only a live one counts.
  if (file && await answers(file.url)) {
    return {
      source: "server.json",
      url: file.url,
      token: readTokenFile(file.token_file),
      container: file.container,
    };
  }
  return { source: "embedded" };
}
