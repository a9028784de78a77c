import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { StationPaths } from "../config/paths.ts";
import { readServerFile, writeServerFile } from "../config/server_file.ts";
import { VERSION } from "../version.ts";

/** Where the host keeps a `stn up` station's API token: $STATION_HOME/up/<name>.token, mode 0600. */
export function tokenFile(paths: StationPaths, name: string): string {
  return join(paths.home, "up", `${name}.token`);
}

/** The station's saved token, or a new one (32 random bytes, hex) that saveToken keeps once the station is up. */
export function stationToken(path: string): { token: string; created: boolean } {
  try {
    const token = Deno.readTextFileSync(path).trim();
    if (token) return { token, created: false };
  } catch { /* first up */ }
  return { token: randomBytes(32).toString("hex"), created: true };
}

/** Saves the token, readable by this user only (0600, written whole or not at all). */
export function saveToken(path: string, token: string): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(tmp, token + "\n", { mode: 0o600 });
  Deno.chmodSync(tmp, 0o600);
  Deno.renameSync(tmp, path);
}

/** The file naming this home's last `stn up` container: `stn logs` finds it after `stn down` too. */
export const lastStationFile = (paths: StationPaths) => join(paths.home, "up", "station");

/**
 * Writes server.json for the container, so every other `stn` on this host finds it with its token, and
 * remembers the container by this home (not by the folder `stn up` ran in).
 */
export function announce(
  paths: StationPaths,
  info: {
    url: string;
    mcpUrl: string;
    agentMcpUrl: string;
    pid: number;
    container: string;
    tokenFile: string;
  },
): void {
  writeServerFile(paths.serverJson, {
    url: info.url,
    // The container listens on 0.0.0.0 inside: its MCP ports want the token like its API.
    mcp_url: info.mcpUrl,
    agent_mcp_url: info.agentMcpUrl,
    mcp_auth: true,
    pid: info.pid,
    started_at: new Date().toISOString(),
    version: VERSION,
    container: info.container,
    token_file: info.tokenFile,
  });
  Deno.mkdirSync(join(paths.home, "up"), { recursive: true, mode: 0o700 });
  Deno.writeTextFileSync(lastStationFile(paths), info.container + "\n", { mode: 0o600 });
}

/** Removes server.json when it announces this container. */
export function forget(paths: StationPaths, container: string): void {
  if (readServerFile(paths.serverJson)?.container !== container) return;
  try {
    Deno.removeSync(paths.serverJson);
  } catch { /* gone */ }
}
