/**
 * The MCP tools a test station offers agents: the user's own station's catalogue of the environment (what
 * `stn sync` discovered, and its approvals), read without changing it, and for tools it does not know, the
 * tools the suite's cassettes recorded — so a suite replays offline on a machine that never synced.
 */

import { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../errors.ts";
import type { Database } from "../db/database.ts";
import { log } from "../log.ts";
import { parseCassette } from "./cassette.ts";

/** The pseudo server the cassettes' tools are filed under (it has no launch spec: it never starts). */
export const RECORDED_SERVER = "recorded";

type Row = Record<string, unknown>;

/** Copies the environment's MCP servers, tools and approvals from the user's ledger (read-only), if it has any. */
function copyFromHome(db: Database, homeDb: string, environment: string): void {
  let home: DatabaseSync;
  try {
    home = new DatabaseSync(homeDb, { readOnly: true });
  } catch {
    return; // no station was ever started on this home
  }
  try {
    for (const table of ["mcp_servers", "mcp_tools", "mcp_approvals"]) {
      const rows = home.prepare(`SELECT * FROM ${table} WHERE environment = ?`).all(environment) as Row[];
      for (const r of rows) {
        const cols = Object.keys(r);
        db.prepare(
          `INSERT OR IGNORE INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
        )
          .run(...cols.map((c) => r[c] as string | number | null));
      }
    }
  } catch (err) {
    log.warn("stn test: the station's MCP catalogue could not be read; using the cassettes' tools", {
      error: errorMessage(err),
    });
  } finally {
    home.close();
  }
}

/** Files the tools the cassettes offered models under RECORDED_SERVER, where the catalogue lacks them. */
function addRecordedTools(
  db: Database,
  environment: string,
  cassettes: Array<{ path: string; text: string }>,
): void {
  const known = new Set(
    (db.prepare("SELECT exposed_name FROM mcp_tools WHERE environment = ?").all(environment) as Row[])
      .map((r) => String(r.exposed_name)),
  );
  const tools = new Map<string, { description: string; input_schema: unknown }>();
  for (const { path, text } of cassettes) {
    let runs;
    try {
      runs = parseCassette(text, path).runs;
    } catch {
      continue; // the case itself reports an unreadable cassette
    }
    for (const e of runs.flatMap((r) => r.events)) {
      if (!("model" in e)) continue;
      for (const t of e.model.request.tools) {
        if (t.name.startsWith("__") && !known.has(t.name)) tools.set(t.name, t);
      }
    }
  }
  if (tools.size === 0) return;
  const now = new Date().toISOString();
  db.prepare(
    `INSERT OR IGNORE INTO mcp_servers (environment, name, config_file, config_checksum, transport, template, synced_at)
     VALUES (?, ?, '(cassettes)', '', 'stdio', '{}', ?)`,
  ).run(environment, RECORDED_SERVER, now);
  for (const [exposed, t] of tools) {
    db.prepare(
      `INSERT OR IGNORE INTO mcp_tools (environment, server, name, exposed_name, description, input_schema)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(
      environment,
      RECORDED_SERVER,
      exposed.slice(2),
      exposed,
      t.description,
      JSON.stringify(t.input_schema),
    );
  }
}

/** Gives a test station's ledger the MCP tools its agents are offered (see the module comment). */
export function seedToolCatalogue(
  db: Database,
  environment: string,
  homeDb: string,
  cassettes: Array<{ path: string; text: string }>,
): void {
  copyFromHome(db, homeDb, environment);
  addRecordedTools(db, environment, cassettes);
}
