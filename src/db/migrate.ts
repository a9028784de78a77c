/** Applying numbered schema migrations once each, in order, each in its own transaction. */

import type { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../errors.ts";

/** One numbered schema change. Versions are applied once, in order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Applies the migrations not yet recorded, each in its own transaction; returns the versions applied. */
export function migrate(db: DatabaseSync, migrations: readonly Migration[]): number[] {
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i].version <= migrations[i - 1].version) {
      throw new Error(`migrations out of order: ${migrations[i - 1].version} then ${migrations[i].version}`);
    }
  }
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const applied: number[] = [];
  const isApplied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const m of migrations) {
    if (isApplied.get(m.version)) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have applied it while we waited for the write lock.
      if (!isApplied.get(m.version)) {
        db.exec(m.sql);
        record.run(m.version, m.name, new Date().toISOString());
        applied.push(m.version);
      }
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw new Error(`migration ${m.version} (${m.name}) failed: ${errorMessage(err)}`, { cause: err });
    }
  }
  return applied;
}

/** The highest applied migration version (0 for an empty database). */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null };
  return row.v ?? 0;
}
