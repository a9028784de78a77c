/**
 * A Station (Go project) home for tests: tests/fixtures/station_home/home copied, and its station.db built
 * from Station's 44 goose migrations (tests/fixtures/station_home/migrations) with a few rows of use.
 */

import { DatabaseSync } from "node:sqlite";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cpSync } from "node:fs";
import { hex } from "../../src/lib/hex.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/station_home/", import.meta.url));

/** The Up part of a goose migration file (goose's own annotations are SQL comments). */
function gooseUp(sql: string): string {
  return sql.split(/^-- \+goose Down/m)[0];
}

/** Station's migration files in the order goose applies them (by their number). */
export function stationMigrations(): { version: number; file: string }[] {
  const dir = join(FIXTURE, "migrations");
  return [...Deno.readDirSync(dir)].map((e) => ({ version: parseInt(e.name, 10), file: join(dir, e.name) }))
    .sort((a, b) => a.version - b.version);
}

const ROWS = `
  INSERT INTO agents (name, description, prompt, max_steps, environment_id, created_by, input_schema)
    VALUES ('echo-agent', 'Repeats the user''s input', 'You repeat what the user says.', 3, 1, 1,
      '{"type":"object","properties":{"userInput":{"type":"string"}},"required":["userInput"]}');
  INSERT INTO agents (name, description, prompt, max_steps, environment_id, created_by)
    VALUES ('db-only-agent', 'An agent Station keeps only in its database', 'You summarize text.', 5, 1, 1);
  INSERT INTO agent_runs (agent_id, user_id, task, final_response, steps_taken, status, completed_at)
    VALUES (1, 1, 'hello', 'hello', 1, 'completed', datetime('now')),
           (1, 1, 'again', '', 1, 'failed', datetime('now')),
           (2, 1, 'summarize this', 'a summary', 2, 'completed', datetime('now'));
  INSERT INTO workflows (workflow_id, name, description, version, definition)
    VALUES ('greet', 'Greet', 'says hello', 1,
      '{"id":"greet","start":"hello","states":[{"id":"hello","type":"inject","data":{"text":"hi"},"end":true}]}'),
           ('greet', 'Greet', 'says hello twice', 2,
      '{"id":"greet","start":"hello","states":[{"id":"hello","type":"inject","data":{"text":"hi hi"},"end":true}]}');
  INSERT INTO workflow_runs (run_id, workflow_id, workflow_version, status)
    VALUES ('run-1', 'greet', 1, 'completed'), ('run-2', 'greet', 2, 'failed');
`;

/** Builds Station's station.db at `path` as its goose run leaves it: every migration applied and recorded. */
export function buildStationDb(path: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode = WAL"); // as Station's internal/db/db.go sets it
    db.exec(`CREATE TABLE goose_db_version (
      id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL,
      tstamp TIMESTAMP DEFAULT (datetime('now')))`);
    db.exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1)");
    for (const m of stationMigrations()) {
      db.exec("BEGIN");
      db.exec(gooseUp(Deno.readTextFileSync(m.file)));
      db.prepare("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)").run(m.version);
      db.exec("COMMIT");
    }
    db.exec(ROWS);
  } finally {
    db.close();
  }
}

/** A temp Station home: config.yaml, environments/default and a station.db with all 44 migrations. */
export function stationHome(dir: string): void {
  cpSync(join(FIXTURE, "home"), dir, { recursive: true });
  buildStationDb(join(dir, "station.db"));
}

/** sha256 of every file under `dir`, by relative path (what a test compares before and after). */
export async function hashTree(dir: string, under: string[] = [""]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string) => {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch {
      return;
    }
    if (info.isDirectory) {
      for await (const e of Deno.readDir(path)) await walk(join(path, e.name));
    } else {
      const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
      out[relative(dir, path)] = hex(digest);
    }
  };
  for (const u of under) await walk(join(dir, u));
  return out;
}
