import type { Database } from "../db/database.ts";
import { type AgentDefinition, AgentDefinitionSchema } from "./types.ts";

/**
 * The agents table (migration 0006): one row per agent file of an environment, written only by
 * `stn sync` (agents/sync.ts). This module is the read API every other part uses.
 */

/** A stored agent: its definition and when sync first and last stored it. */
export interface StoredAgent {
  definition: AgentDefinition;
  created_at: string;
  updated_at: string;
}

type Row = { definition: string; created_at: string; updated_at: string };

const toStored = (r: Row): StoredAgent => ({
  definition: AgentDefinitionSchema.parse(JSON.parse(r.definition)),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** One agent of an environment, as last synced. */
export function getAgent(db: Database, environment: string, name: string): AgentDefinition | undefined {
  return getStoredAgent(db, environment, name)?.definition;
}

/** One agent of an environment with its timestamps. */
export function getStoredAgent(db: Database, environment: string, name: string): StoredAgent | undefined {
  const row = db.prepare(
    "SELECT definition, created_at, updated_at FROM agents WHERE environment = ? AND name = ?",
  ).get(environment, name) as Row | undefined;
  return row && toStored(row);
}

/** Every agent of an environment, by name. */
export function listAgents(db: Database, environment: string): StoredAgent[] {
  const rows = db.prepare(
    "SELECT definition, created_at, updated_at FROM agents WHERE environment = ? ORDER BY name",
  ).all(environment) as Row[];
  return rows.map(toStored);
}

/** The stored definitions' JSON by name, for sync to compare against. */
export function storedDefinitions(db: Database, environment: string): Map<string, string> {
  const rows = db.prepare("SELECT name, definition FROM agents WHERE environment = ?").all(environment) as {
    name: string;
    definition: string;
  }[];
  return new Map(rows.map((r) => [r.name, r.definition]));
}

/** Inserts or replaces one agent (inside sync's transaction). */
export function putAgent(db: Database, def: AgentDefinition, now: string): void {
  db.prepare(
    `INSERT INTO agents (environment, name, checksum, definition, path, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (environment, name) DO UPDATE SET
       checksum = excluded.checksum, definition = excluded.definition, path = excluded.path,
       updated_at = excluded.updated_at`,
  ).run(def.environment, def.name, def.checksum, JSON.stringify(def), def.path, now, now);
}

/** Deletes one agent (its file is gone). */
export function deleteAgent(db: Database, environment: string, name: string): void {
  db.prepare("DELETE FROM agents WHERE environment = ? AND name = ?").run(environment, name);
}

/** Every agent of every environment with an enabled `schedule:` (what the agent scheduler runs). */
export function scheduledAgents(db: Database): AgentDefinition[] {
  // Filtered in SQL: the scheduler calls this every few seconds, and most agents have no schedule to parse.
  const rows = db.prepare(
    "SELECT definition FROM agents WHERE json_extract(definition, '$.schedule') IS NOT NULL ORDER BY environment, name",
  ).all() as { definition: string }[];
  return rows
    .map((r) => AgentDefinitionSchema.parse(JSON.parse(r.definition)))
    .filter((d) => d.schedule && d.schedule.enabled !== false);
}
