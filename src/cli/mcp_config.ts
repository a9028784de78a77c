/** `stn mcp config`: the station's MCP addresses and token, in the exact config shape of each MCP client. */

import { fileURLToPath } from "node:url";
import { discoverTarget } from "../client/discovery.ts";
import type { LoadedConfig } from "../config/resolve.ts";
import { findProgram } from "../lib/programs.ts";
import { mcpToken } from "../mcp/server/token.ts";
import { readServerFile } from "../config/server_file.ts";

/** The clients whose config files `stn mcp config` writes, by the name `--client` takes. */
export const MCP_CLIENTS = ["claude", "claude-code", "cursor", "vscode", "windsurf"] as const;
export type McpClientName = typeof MCP_CLIENTS[number];

/** Where the station's MCP servers are and the token they want (undefined: none needed). */
export interface McpAddress {
  url: string;
  token?: string;
}

/** How a stdio client launches `stn mcp stdio`. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Something to tell the user on stderr (a guess, a missing token, a command not on PATH). */
export type Warn = (message: string) => void;

/**
 * The MCP address of the station the CLI would talk to (--station, STATION_URL, a live server.json of
 * `stn serve` or `stn up`), with the token its MCP port wants; else the configured ports on this host.
 */
export async function mcpAddress(
  config: LoadedConfig,
  options: { station?: string; agent?: boolean },
  warn: Warn,
): Promise<McpAddress> {
  const server = config.values.server;
  const target = await discoverTarget({ station: options.station, paths: config.paths });
  const configuredToken = Deno.env.get("STATION_API_TOKEN") ?? server.api_token;
  const port = options.agent ? server.agent_port : server.mcp_port;
  const withPort = (base: string) => {
    const u = new URL(base);
    u.port = String(port);
    return `${u.origin}/mcp`;
  };
  if (target.source === "server.json") {
    const file = readServerFile(config.paths.serverJson)!;
    const url = (options.agent ? file.agent_mcp_url : file.mcp_url) ?? withPort(file.url);
    const needed = file.mcp_auth ?? mcpToken(server) !== undefined;
    const token = needed ? target.token ?? configuredToken : undefined;
    if (needed && !token) warn(`${url} wants the API token, and none is configured (STATION_API_TOKEN)`);
    return { url, token };
  }
  if (target.url) {
    // A station named by its API address: its MCP port is not announced here, so the configured one is used.
    const url = withPort(target.url);
    warn(
      `assuming the MCP port of config.yaml (server.${options.agent ? "agent_port" : "mcp_port"}): ${url}`,
    );
    return { url, token: configuredToken };
  }
  const host = server.host === "0.0.0.0" || server.host === "::" ? "127.0.0.1" : server.host;
  warn("no station is running: the config points at the ports `stn serve` will listen on");
  return { url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/mcp`, token: mcpToken(server) };
}

/**
 * How a client launches `stn mcp stdio`: `stn` when it is on PATH, else the absolute path of the
 * running stn (the compiled binary, or this checkout's scripts/stn) — with a warning, since a client
 * started from a desktop may have an even shorter PATH. STATION_HOME is always passed (the client's
 * own environment has none), and the station's address and token when they came from outside.
 */
export function stdioLaunch(config: LoadedConfig, options: { station?: string }, warn: Warn): StdioLaunch {
  let command = "stn";
  if (!findProgram("stn", { dirs: [] })) {
    const exe = Deno.execPath();
    command = /\/stn$/.test(exe) ? exe : fileURLToPath(new URL("../../scripts/stn", import.meta.url));
    warn(`stn is not on PATH: the config runs ${command} (scripts/install puts stn on the PATH)`);
  }
  const station = options.station ?? Deno.env.get("STATION_URL");
  const token = Deno.env.get("STATION_API_TOKEN");
  return {
    command,
    args: ["mcp", "stdio"],
    env: {
      STATION_HOME: config.paths.home,
      ...(station ? { STATION_URL: station } : {}),
      ...(token ? { STATION_API_TOKEN: token } : {}),
    },
  };
}

const authHeaders = (a: McpAddress) => a.token ? { Authorization: `Bearer ${a.token}` } : {};

/** A stdio entry as the client spells it. */
function stdioEntry(client: McpClientName, launch: StdioLaunch): Record<string, unknown> {
  const typed = client === "vscode" || client === "claude-code" ? { type: "stdio" } : {};
  return { ...typed, command: launch.command, args: launch.args, env: launch.env };
}

/**
 * An HTTP entry as the client spells it: Cursor `{url, headers}`, VS Code and Claude Code
 * `{type: "http", url, headers}`, Windsurf `{serverUrl, headers}`. Claude Desktop's config file takes
 * only commands, so it gets the `mcp-remote` bridge (the header through an env variable: its value has
 * a space, which some launchers split).
 */
function httpEntry(client: McpClientName, address: McpAddress): Record<string, unknown> {
  const headers = authHeaders(address);
  switch (client) {
    case "claude":
      return {
        command: "npx",
        args: [
          "-y",
          "mcp-remote",
          address.url,
          ...(address.token ? ["--header", "Authorization:${AUTH}"] : []),
        ],
        ...(address.token ? { env: { AUTH: `Bearer ${address.token}` } } : {}),
      };
    case "cursor":
      return { url: address.url, headers };
    case "windsurf":
      return { serverUrl: address.url, headers };
    default:
      return { type: "http", url: address.url, headers };
  }
}

/** The whole config file for one server: VS Code's `.vscode/mcp.json` has `servers`, the others `mcpServers`. */
export function clientConfig(
  client: McpClientName,
  name: string,
  how: { stdio: StdioLaunch } | { http: McpAddress },
): Record<string, unknown> {
  const entry = "stdio" in how ? stdioEntry(client, how.stdio) : httpEntry(client, how.http);
  return client === "vscode" ? { servers: { [name]: entry } } : { mcpServers: { [name]: entry } };
}
