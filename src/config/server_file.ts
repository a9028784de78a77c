import { dirname } from "../lib/path.ts";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../lib/private_files.ts";

/**
 * $STATION_HOME/run/server.json: how CLI commands find a running server
 * (docs/design/process-model.md#finding-a-server).
 */
export interface ServerFile {
  url: string;
  /** The MCP endpoints (management, agents), for `stn mcp config`. */
  mcp_url?: string;
  agent_mcp_url?: string;
  /** True when the MCP ports want the API token (`stn mcp config` then adds it). */
  mcp_auth?: boolean;
  pid: number;
  started_at: string;
  version: string;
  /** Set by `stn up`: the container serving at url (pid is then the container's main process). */
  container?: string;
  /** Set by `stn up`: the file holding the bearer token the server wants (0600). */
  token_file?: string;
}

/** Writes server.json atomically (temp file + rename), so a reader never sees half of it. */
export function writeServerFile(path: string, info: ServerFile): void {
  makePrivateDir(dirname(path));
  const tmp = `${path}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(info, null, 2) + "\n", { mode: PRIVATE_FILE_MODE });
  Deno.renameSync(tmp, path);
}

/** Reads server.json; null when absent or unreadable. */
export function readServerFile(path: string): ServerFile | null {
  try {
    const info = JSON.parse(Deno.readTextFileSync(path));
    return typeof info?.url === "string" && typeof info?.pid === "number" ? info : null;
  } catch {
    return null;
  }
}

/** Removes server.json if it is still the one this process wrote. */
export function removeServerFile(path: string, pid = Deno.pid): void {
  if (readServerFile(path)?.pid !== pid) return;
  try {
    Deno.removeSync(path);
  } catch { /* already gone */ }
}
