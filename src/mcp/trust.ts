import { launchLine, type McpLaunch } from "../contract/sync.ts";
import { type Database, transaction } from "../db/database.ts";
import { EXAMPLE_MCP_CONFIG } from "../environment_files/examples.ts";
import { StationError } from "../errors.ts";
import { sha256 } from "../files/checksum.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import {
  listMcpConfigFiles,
  type McpServerTemplate,
  parseMcpConfigFile,
  readMcpConfigFile,
} from "./config/files.ts";
import { displayTemplate } from "./config/render.ts";

/**
 * Which MCP servers stn may start (issue 27). A server runs a command of its config's choosing, so none
 * is started — by sync, an agent or a workflow — until the user approved its launch spec: the digest of
 * its command, args, cwd and env (or url and headers) as the config file writes them, placeholders
 * intact. Changing any of them (a bundle, a `git pull`, an edit) makes it untrusted again. Placeholder
 * values come from this machine's variables.yml and environment, which a bundle never carries, so they
 * are not part of the digest. The approvals live in the ledger (migration 0017).
 */

/** The launch spec's digest, `sha256:<hex>` over its canonical JSON (keys of env and headers sorted). */
export function launchDigest(t: McpServerTemplate): string {
  const sorted = (r: Record<string, string>) =>
    Object.fromEntries(Object.entries(r).sort(([a], [b]) => a < b ? -1 : 1));
  const spec = t.transport === "stdio"
    ? ["stdio", t.entry.command, t.entry.args, t.entry.cwd ?? null, sorted(t.entry.env)]
    : ["http", t.entry.url, sorted(t.entry.headers)];
  return `sha256:${sha256().update(JSON.stringify(spec)).digest("hex")}`;
}

/** What the server launches, as it may be shown (secrets the file spells out masked). */
export function launchOf(t: McpServerTemplate): McpLaunch {
  const shown = displayTemplate(t) as { args?: string[]; env?: Record<string, string>; url?: string };
  if (t.transport === "http") {
    return { transport: "http", url: shown.url!, headers: Object.keys(t.entry.headers) };
  }
  return {
    transport: "stdio",
    command: t.entry.command,
    args: shown.args ?? [],
    ...(t.entry.cwd !== undefined ? { cwd: t.entry.cwd } : {}),
    env: shown.env ?? {},
  };
}

let builtin: Set<string> | undefined;

/**
 * The launches stn itself writes, approved in every station: the filesystem server of `stn init`'s
 * example environment (stn wrote it; its digest covers the entry, not the folder FILESYSTEM_ROOT names).
 */
function builtinDigests(): Set<string> {
  if (!builtin) {
    const read = parseMcpConfigFile("filesystem.json", new TextEncoder().encode(EXAMPLE_MCP_CONFIG));
    builtin = new Set("servers" in read ? read.servers.map(launchDigest) : []);
  }
  return builtin;
}

/** Whether the server, as its config writes it now, may be started in the environment. */
export function isApproved(db: Database, environment: string, t: McpServerTemplate): boolean {
  const digest = launchDigest(t);
  if (builtinDigests().has(digest)) return true;
  const row = db.prepare("SELECT digest FROM mcp_approvals WHERE environment = ? AND server = ?").get(
    environment,
    t.name,
  ) as { digest: string } | undefined;
  return row?.digest === digest;
}

/** One approval as recorded. */
export interface McpApproval {
  server: string;
  digest: string;
  approved_at: string;
  launch: McpLaunch;
}

/** Records the servers' launches as approved in the environment (replacing earlier approvals of them). */
export function approveServers(
  db: Database,
  environment: string,
  servers: McpServerTemplate[],
): McpApproval[] {
  const now = new Date().toISOString();
  const approvals = servers.map((t) => ({
    server: t.name,
    digest: launchDigest(t),
    approved_at: now,
    launch: launchOf(t),
  }));
  transaction(db, () => {
    const put = db.prepare(
      `INSERT INTO mcp_approvals (environment, server, digest, approved_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (environment, server) DO UPDATE SET digest = excluded.digest, approved_at = excluded.approved_at`,
    );
    for (const a of approvals) put.run(environment, a.server, a.digest, a.approved_at);
  });
  return approvals;
}

/** The command that approves a server. */
export function approveCommand(environment: string, server: string): string {
  return `stn mcp approve ${server} --env ${environment}`;
}

/** 403 `mcp_server_untrusted`: the server is not started, and how to approve it. */
export function untrustedError(environment: string, t: McpServerTemplate): StationError {
  return new StationError(
    "mcp_server_untrusted",
    `MCP server ${t.name} of environment ${environment} is not approved (new, or its launch changed since ` +
      `approved), so it was not started: it runs \`${launchLine(launchOf(t))}\``,
    {
      hint:
        `check what it runs, then \`${
          approveCommand(environment, t.name)
        }\` (or \`stn env trust ${environment}\`` +
        " for all of the environment's servers)",
      details: { environment, server: t.name, launch: launchOf(t) },
    },
  );
}

/**
 * Approves servers of an environment folder as their configs write them now: those named, or all of them
 * (`stn env trust`). A name no config defines is 404 `mcp_server_not_found`; nothing is approved then.
 */
export async function approveEnvironment(
  db: Database,
  environment: string,
  directory: string,
  names?: string[],
): Promise<McpApproval[]> {
  const templates = new Map<string, McpServerTemplate>();
  for (const file of await listMcpConfigFiles(directory)) {
    const read = await readMcpConfigFile(file);
    if ("servers" in read) {
      for (const t of read.servers) if (!templates.has(t.name)) templates.set(t.name, t);
    }
  }
  const unknown = (names ?? []).filter((n) => !templates.has(n));
  if (unknown.length) {
    const guess = didYouMean(unknown[0], [...templates.keys()]);
    throw new StationError(
      "mcp_server_not_found",
      `no MCP config of environment ${environment} defines ${unknown.join(", ")} (servers: ${
        templates.size ? [...templates.keys()].join(", ") : "none"
      })`,
      { hint: guess ? `did you mean ${guess}?` : `\`stn env show ${environment}\` lists its MCP servers` },
    );
  }
  return approveServers(
    db,
    environment,
    names ? names.map((n) => templates.get(n)!) : [...templates.values()],
  );
}
