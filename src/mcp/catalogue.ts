import { type Database, transaction } from "../db/database.ts";
import type { McpToolInfo } from "./client/mod.ts";

/**
 * The MCP catalogue in the ledger: each environment's servers (from their config files) and the tools
 * discovery found on them. The only SQL of src/mcp/.
 */

/** Why a server's last discovery failed. */
export interface McpServerError {
  code: string;
  message: string;
  hint?: string;
}

/** A server as stored. */
export interface McpServerRecord {
  environment: string;
  name: string;
  config_file: string;
  config_checksum: string;
  transport: "stdio" | "http";
  /** The entry as written: placeholders intact, secrets spelt out in the file masked. */
  template: Record<string, unknown>;
  synced_at: string;
  discovered_at: string | null;
  error: McpServerError | null;
}

/** A tool as stored. */
export interface McpToolRecord {
  environment: string;
  server: string;
  name: string;
  /** `__<name>`: what agents list in `tools:` and what the model sees. */
  exposed_name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The name under which agents see an MCP tool (Station's form: `__<tool>`). */
export function exposedToolName(tool: string): string {
  return `__${tool}`;
}

type ServerRow = Omit<McpServerRecord, "template" | "error"> & { template: string; error: string | null };
type ToolRow = Omit<McpToolRecord, "input_schema"> & { input_schema: string };

const serverFromRow = (r: ServerRow): McpServerRecord => ({
  ...r,
  template: JSON.parse(r.template),
  error: r.error === null ? null : JSON.parse(r.error),
});
const toolFromRow = (r: ToolRow): McpToolRecord => ({ ...r, input_schema: JSON.parse(r.input_schema) });

/** An environment's servers, by name. */
export function listMcpServers(db: Database, environment: string): McpServerRecord[] {
  const rows = db.prepare("SELECT * FROM mcp_servers WHERE environment = ? ORDER BY name").all(environment);
  // node:sqlite types rows as Record<string, SQLOutputValue>; the table's columns are the row type's.
  return (rows as unknown as ServerRow[]).map(serverFromRow);
}

/** An environment's tools, by server then name. */
export function listMcpTools(db: Database, environment: string): McpToolRecord[] {
  const rows = db.prepare("SELECT * FROM mcp_tools WHERE environment = ? ORDER BY server, name").all(
    environment,
  );
  // node:sqlite types rows as Record<string, SQLOutputValue>; the table's columns are the row type's.
  return (rows as unknown as ToolRow[]).map(toolFromRow);
}

/**
 * The MCP tools agents of an environment may use: exposed name → server. A name two servers offer is
 * left out (it is ambiguous; `stn sync` reports it as `mcp_tool_conflict`).
 */
export function knownMcpTools(db: Database, environment: string): Map<string, string> {
  // node:sqlite types rows as Record<string, SQLOutputValue>; the table's columns are the row type's.
  const rows = db.prepare(
    `SELECT exposed_name, MIN(server) AS server FROM mcp_tools WHERE environment = ?
     GROUP BY exposed_name HAVING COUNT(*) = 1 ORDER BY exposed_name`,
  ).all(environment) as unknown as Array<{ exposed_name: string; server: string }>;
  return new Map(rows.map((r) => [r.exposed_name, r.server]));
}

/** What one sync writes for one server: its config, and its tools when discovery succeeded. */
export interface McpServerWrite {
  server: Omit<McpServerRecord, "environment" | "discovered_at">;
  /** The tools found; undefined when discovery failed (the stored tools are kept). */
  tools?: McpToolInfo[];
}

/** Applies a sync in one transaction: writes the servers (and tools found) and deletes the servers named. */
export function applyMcpSync(
  db: Database,
  environment: string,
  writes: McpServerWrite[],
  remove: string[],
): void {
  transaction(db, () => {
    const upsert = db.prepare(
      `INSERT INTO mcp_servers (environment, name, config_file, config_checksum, transport, template, synced_at, discovered_at, error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (environment, name) DO UPDATE SET
         config_file = excluded.config_file, config_checksum = excluded.config_checksum,
         transport = excluded.transport, template = excluded.template, synced_at = excluded.synced_at,
         discovered_at = COALESCE(excluded.discovered_at, mcp_servers.discovered_at), error = excluded.error`,
    );
    const clearTools = db.prepare("DELETE FROM mcp_tools WHERE environment = ? AND server = ?");
    const insertTool = db.prepare(
      `INSERT INTO mcp_tools (environment, server, name, exposed_name, description, input_schema)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    for (const { server: s, tools } of writes) {
      upsert.run(
        environment,
        s.name,
        s.config_file,
        s.config_checksum,
        s.transport,
        JSON.stringify(s.template),
        s.synced_at,
        tools ? s.synced_at : null,
        s.error ? JSON.stringify(s.error) : null,
      );
      if (!tools) continue;
      clearTools.run(environment, s.name);
      // A server may list a name twice; the first one stands.
      const seen = new Set<string>();
      for (const t of tools) {
        if (seen.has(t.name)) continue;
        seen.add(t.name);
        insertTool.run(
          environment,
          s.name,
          t.name,
          exposedToolName(t.name),
          t.description,
          JSON.stringify(t.inputSchema),
        );
      }
    }
    const del = db.prepare("DELETE FROM mcp_servers WHERE environment = ? AND name = ?");
    for (const name of remove) del.run(environment, name);
  });
}
