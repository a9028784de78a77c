import { basename, dirname } from "node:path";
import type { AgentTool, Toolbox } from "../agents/types.ts";
import type { Database } from "../db/database.ts";
import { StationError } from "../errors.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import { listMcpServers, listMcpTools, type McpServerRecord, type McpToolRecord } from "./catalogue.ts";
import { connectMcpServer, type McpServerSpec } from "./client/mod.ts";
import { readMcpConfigFile } from "./config/files.ts";
import { masker } from "../environment_files/placeholders.ts";
import { renderServer } from "./config/render.ts";
import { readVariables, variableSource } from "../environment_files/variables.ts";
import { isApproved, untrustedError } from "./trust.ts";
import { sha256 } from "../files/checksum.ts";
import type { McpPool } from "./pool.ts";

/**
 * The MCP tools of one agent run: the servers offering the requested tools are connected (their configs
 * read again and rendered only now, so secrets live in memory for the run and nowhere else) and their
 * tools handed over as AgentTools. With a pool (a station's), servers are leased from it and shared
 * across runs, except those whose entry says `per_run: true`; `close()` releases the leases and ends the
 * run's own connections. The config check and the approval gate hold on every open, pooled or not.
 */

/** Options of openMcpToolbox. */
export interface McpToolboxOptions {
  /** Aborts connecting (the run was canceled); calls take their own signal. */
  signal?: AbortSignal;
  /** Placeholder values that come before variables.yml and the process environment. */
  variables?: Record<string, string>;
  /** Time per server to start and complete the handshake (default 60 s). */
  timeoutMs?: number;
  /** Shared connections; without one every server is connected for this run alone. */
  pool?: McpPool;
}

/** A server opened for a run: pooled (a lease) or its own connection. */
interface OpenServer {
  call(tool: string, args: unknown, signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** The environment folder a config file belongs to (`<env>/x.json` or `<env>/mcp-configs/x.json`). */
function environmentDirOf(configFile: string): string {
  const dir = dirname(configFile);
  return basename(dir) === "mcp-configs" ? dirname(dir) : dir;
}

/** Picks the catalogue entries of the requested tools; unknown or ambiguous names are errors. */
function resolveTools(db: Database, environment: string, names: string[]): McpToolRecord[] {
  const all = listMcpTools(db, environment);
  const byName = new Map<string, McpToolRecord[]>();
  for (const t of all) byName.set(t.exposed_name, [...(byName.get(t.exposed_name) ?? []), t]);
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length) {
    const servers = [...new Set(all.map((t) => t.server))];
    const guess = didYouMean(unknown[0], [...byName.keys()]);
    throw new StationError(
      "mcp_tool_unknown",
      `no MCP server of environment ${environment} offers ${unknown.join(", ")} (servers searched: ${
        servers.length ? servers.join(", ") : "none"
      })`,
      {
        hint: guess
          ? `did you mean ${guess}?`
          : "MCP tools are named __<tool>; add the server to the environment's MCP configs and run `stn sync`",
        details: { unknown, servers },
      },
    );
  }
  return names.map((n) => {
    const offers = byName.get(n)!;
    if (offers.length > 1) {
      throw new StationError(
        "mcp_tool_conflict",
        `tool ${n} is offered by servers ${
          offers.map((t) => t.server).join(" and ")
        } of environment ${environment}`,
        { hint: "remove one of the servers from the environment and run `stn sync`" },
      );
    }
    return offers[0];
  });
}

/**
 * What starts one MCP server for a run, checked and rendered by the station: a `stn worker` receives it
 * over NATS and starts the server itself (docs/workers.md#agent-steps). `spec` holds filled secrets.
 */
export interface McpLaunch {
  environment: string;
  server: string;
  spec: McpServerSpec;
  /** Filled secret values, masked out of the server's errors. */
  secrets: string[];
  per_run: boolean;
  /** The pool key: the synced config and a digest of the rendered spec (a new secret: a new process). */
  key: string;
}

/**
 * Reads a server's config file again, checks it is the one synced and that its launch is approved, and
 * fills its placeholders.
 */
async function launchOf(
  db: Database,
  server: McpServerRecord,
  options: McpToolboxOptions,
): Promise<McpLaunch> {
  const changed = (why: string) =>
    new StationError("mcp_config_changed", `MCP server ${server.name}: ${why} since the last sync`, {
      hint: `run \`stn sync ${server.environment}\` so the tools agents use match the config`,
    });
  const read = await readMcpConfigFile(server.config_file);
  if (!("servers" in read) || read.checksum !== server.config_checksum) {
    throw changed(`${server.config_file} changed`);
  }
  const template = read.servers.find((s) => s.name === server.name);
  if (!template) throw changed(`its entry left ${server.config_file}`);
  if (!isApproved(db, server.environment, template)) throw untrustedError(server.environment, template);
  const envDir = environmentDirOf(server.config_file);
  const vars = variableSource(envDir, await readVariables(envDir), options.variables);
  const { spec, secrets } = renderServer(template, vars);
  return {
    environment: server.environment,
    server: server.name,
    spec,
    secrets: [...secrets],
    per_run: template.entry.per_run === true,
    key: `${server.config_checksum} ${sha256().update(JSON.stringify(spec)).digest("hex")}`,
  };
}

/** Connects a checked launch — or leases it from the pool, keyed by what would be started. */
async function connect(launch: McpLaunch, options: McpToolboxOptions): Promise<OpenServer> {
  const start = (signal?: AbortSignal) =>
    connectMcpServer(launch.spec, {
      server: launch.server,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal,
      mask: masker(launch.secrets),
    });
  const { pool } = options;
  if (!pool || launch.per_run) {
    pool?.drop(launch.environment, launch.server);
    const conn = await start(options.signal);
    return { call: (tool, args, signal) => conn.callTool(tool, args, { signal }), close: () => conn.close() };
  }
  const lease = await pool.lease({
    environment: launch.environment,
    server: launch.server,
    key: launch.key,
    // Shared: one run's cancellation must not abort a start others wait for.
    start: () => start(),
    signal: options.signal,
  });
  return {
    call: (tool, args, signal) => lease.callTool(tool, args, { signal }),
    close: () => Promise.resolve(lease.release()),
  };
}

/** The MCP tools `toolNames` as the synced catalogue describes them, without connecting (for tool doubles). */
export function mcpToolSpecs(
  db: Database,
  environment: string,
  toolNames: string[],
): Omit<AgentTool, "call">[] {
  return resolveTools(db, environment, [...new Set(toolNames)]).map((t) => ({
    name: t.exposed_name,
    description: t.description,
    inputSchema: t.input_schema,
    server: t.server,
  }));
}

/** The MCP tools an agent lists, with the checked launches of the servers offering them. */
export interface McpToolboxPlan {
  tools: (Omit<AgentTool, "call"> & { tool: string; server: string })[];
  launches: McpLaunch[];
}

/**
 * Plans the MCP tools `toolNames` (exposed names, `__<tool>`) of an environment for one run: the tools and
 * the launches of their servers, each checked (synced, approved) and rendered — nothing started yet.
 */
export async function planMcpToolbox(
  db: Database,
  environment: string,
  toolNames: string[],
  options: McpToolboxOptions = {},
): Promise<McpToolboxPlan> {
  const wanted = resolveTools(db, environment, [...new Set(toolNames)]);
  const serverNames = [...new Set(wanted.map((t) => t.server))];
  const servers = listMcpServers(db, environment).filter((s) => serverNames.includes(s.name));
  return {
    tools: wanted.map((t) => ({
      name: t.exposed_name,
      tool: t.name,
      description: t.description,
      inputSchema: t.input_schema,
      server: t.server,
    })),
    launches: await Promise.all(servers.map((s) => launchOf(db, s, options))),
  };
}

/** Starts (or leases) the servers of a plan and hands their tools over as AgentTools; `close()` ends them. */
export async function openPlannedToolbox(
  plan: McpToolboxPlan,
  options: McpToolboxOptions = {},
): Promise<Toolbox> {
  if (options.signal?.aborted) throw new StationError("canceled", "opening MCP tools was canceled");
  const opened = await Promise.allSettled(plan.launches.map((l) => connect(l, options)));
  const connections = new Map<string, OpenServer>();
  opened.forEach((r, i) => r.status === "fulfilled" && connections.set(plan.launches[i].server, r.value));
  const close = async () => {
    await Promise.allSettled([...connections.values()].map((c) => c.close()));
  };
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await close();
    throw failed.reason;
  }
  const tools: AgentTool[] = plan.tools.map(({ tool, ...t }) => {
    const conn = connections.get(t.server)!;
    return { ...t, call: (args, signal) => conn.call(tool, args, signal) };
  });
  return { tools, close };
}

/** Opens the MCP tools `toolNames` (exposed names, `__<tool>`) of an environment for one run. */
export async function openMcpToolbox(
  db: Database,
  environment: string,
  toolNames: string[],
  options: McpToolboxOptions = {},
): Promise<Toolbox> {
  if (options.signal?.aborted) throw new StationError("canceled", "opening MCP tools was canceled");
  return await openPlannedToolbox(await planMcpToolbox(db, environment, toolNames, options), options);
}
