import type { McpSyncReport } from "../contract/sync.ts";
import type { Database } from "../db/database.ts";
import { toStationError } from "../errors.ts";
import { mapLimit } from "../lib/async.ts";
import { log } from "../log.ts";
import { applyMcpSync, listMcpServers, listMcpTools, type McpServerWrite } from "./catalogue.ts";
import { connectMcpServer } from "./client/mod.ts";
import {
  type ConfigIssue,
  listMcpConfigFiles,
  type McpServerTemplate,
  readMcpConfigFile,
} from "./config/files.ts";
import { masker } from "../environment_files/placeholders.ts";
import {
  readVariables,
  variablesFile,
  type VariableSource,
  variableSource,
} from "../environment_files/variables.ts";
import { displayTemplate, renderServer } from "./config/render.ts";
import { approveServers, isApproved, launchOf, untrustedError } from "./trust.ts";

/**
 * DeclarativeSync of MCP servers (runs before agents and workflows, whose validation reads the tool
 * catalogue): the environment's config files are the source of truth. Each server is started and asked
 * for its tools, time-boxed and one at a time per slot; a server that fails is reported and keeps the
 * tools found before, without stopping the others. Servers whose file or entry is gone are removed with
 * their tools; a file that cannot be read or parsed leaves its stored servers as they were. A server
 * whose launch is not approved (trust.ts) is recorded but not started: `untrusted`, keeping its tools.
 */

/** Where an environment's configs live. */
export interface McpSyncTarget {
  environment: string;
  /** The environment folder (`$STATION_HOME/environments/<env>`). */
  directory: string;
}

/** Options of syncMcpServers. */
export interface McpSyncOptions {
  /** Time per server for starting, the handshake and listing its tools (default 60 s). */
  timeoutMs?: number;
  /** Approve every server as its config writes it now before syncing (`stn sync --trust`). */
  trust?: boolean;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** Servers discovered at once (each may be a process starting). */
const PARALLEL = 4;

/** Syncs an environment's MCP config files into the catalogue and discovers each server's tools. */
export async function syncMcpServers(
  db: Database,
  target: McpSyncTarget,
  options: McpSyncOptions = {},
): Promise<McpSyncReport> {
  const { environment, directory } = target;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const errors: ConfigIssue[] = [];
  const stored = listMcpServers(db, environment);
  /** Stored servers left as they are (their file or entry is malformed right now). */
  const keep = new Set<string>();

  const templates: Array<{ t: McpServerTemplate; checksum: string }> = [];
  const definedIn = new Map<string, string>();
  for (const file of await listMcpConfigFiles(directory)) {
    const read = await readMcpConfigFile(file);
    errors.push(...read.issues);
    if (!("servers" in read)) {
      for (const s of stored) if (s.config_file === file) keep.add(s.name);
      continue;
    }
    // A malformed entry keeps its stored server (if any) rather than removing it.
    for (const name of read.rejected) keep.add(name);
    for (const t of read.servers) {
      const other = definedIn.get(t.name);
      if (other) {
        errors.push({
          file,
          line: t.line,
          code: "mcp_config_invalid",
          message: `server ${t.name} is also defined in ${other}`,
          hint: "server names are unique in an environment: rename one of them",
        });
        continue;
      }
      definedIn.set(t.name, file);
      templates.push({ t, checksum: read.checksum });
    }
  }

  if (options.trust) approveServers(db, environment, templates.map(({ t }) => t));

  let vars: VariableSource | undefined;
  try {
    vars = variableSource(directory, await readVariables(directory));
  } catch (err) {
    const e = toStationError(err);
    // The place is the report's own fields; the message is the bare reason (no `file:line:` twice).
    const at = (e.details ?? {}) as { line?: number; reason?: string };
    errors.push({
      file: variablesFile(directory),
      line: at.line,
      code: "variables_invalid",
      message: at.reason ?? e.message,
      hint: e.hint,
    });
  }

  const now = new Date().toISOString();
  const writes = await mapLimit(templates, PARALLEL, async ({ t, checksum }): Promise<McpServerWrite> => {
    const base = {
      name: t.name,
      config_file: t.file,
      config_checksum: checksum,
      transport: t.transport,
      template: displayTemplate(t),
      synced_at: now,
    };
    if (!isApproved(db, environment, t)) {
      const e = untrustedError(environment, t);
      return { server: { ...base, error: { code: e.code, message: e.message, hint: e.hint! } } };
    }
    if (!vars) {
      const error = { code: "variables_invalid", message: "variables.yml is malformed (see the errors)" };
      return { server: { ...base, error } };
    }
    try {
      return { server: { ...base, error: null }, tools: await discover(t, vars, timeoutMs) };
    } catch (err) {
      const e = toStationError(err);
      log.debug(`mcp server ${t.name}: discovery failed`, { error: e.message });
      return {
        server: { ...base, error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) } },
      };
    }
  });

  const removed = stored.map((s) => s.name).filter((n) => !definedIn.has(n) && !keep.has(n));
  applyMcpSync(db, environment, writes, removed);

  const tools = listMcpTools(db, environment);
  const files = new Map(listMcpServers(db, environment).map((s) => [s.name, s.config_file]));
  const offeredBy = new Map<string, string[]>();
  for (const t of tools) offeredBy.set(t.exposed_name, [...(offeredBy.get(t.exposed_name) ?? []), t.server]);
  for (const [exposed, servers] of offeredBy) {
    if (servers.length < 2) continue;
    errors.push({
      file: files.get(servers[1]) ?? directory,
      code: "mcp_tool_conflict",
      message: `tool ${exposed} is offered by servers ${
        servers.map((s) => `${s} (${files.get(s)})`).join(" and ")
      }`,
      hint:
        "agents cannot tell them apart: remove one server from the environment, or keep them in separate environments",
    });
  }

  return {
    servers: writes.map(({ server: s }, i) => ({
      name: s.name,
      file: s.config_file,
      transport: s.transport,
      status: !s.error
        ? "ok" as const
        : s.error.code === "mcp_server_untrusted"
        ? "untrusted" as const
        : "failed" as const,
      tools: tools.filter((t) => t.server === s.name).map((t) => t.exposed_name),
      launch: launchOf(templates[i].t),
      ...(s.error ? { error: s.error } : {}),
    })),
    removed,
    errors: errors.map((e) => ({
      file: e.file,
      ...(e.line ? { line: e.line } : {}),
      ...(e.column ? { column: e.column } : {}),
      code: e.code,
      message: e.message,
      ...(e.hint ? { hint: e.hint } : {}),
    })),
  };
}

/** Starts a server, lists its tools and closes it, all within timeoutMs; errors never show a secret. */
async function discover(t: McpServerTemplate, vars: VariableSource, timeoutMs: number) {
  const { spec, secrets } = renderServer(t, vars);
  const mask = masker(secrets);
  const started = Date.now();
  const conn = await connectMcpServer(spec, { server: t.name, timeoutMs, mask });
  try {
    return await conn.listTools({ timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)) });
  } finally {
    await conn.close();
  }
}
