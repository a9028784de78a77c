/** Applying numbered schema migrations once each, in order, each in its own transaction. */

import type { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../errors.ts";

/** One numbered schema change. Versions are applied once, in order. */
export interface Migration {
  version: number;
  name: string;
  /** The SQL, or what builds it from the schema as it is (a table rebuild that keeps every column). */
  sql: string | ((db: DatabaseSync) => string);
  /**
   * Run with foreign keys off (SQLite's table rebuild: dropping a parent table would cascade to its children),
   * then checked with `foreign_key_check` before the commit.
   */
  foreignKeysOff?: boolean;
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
    // The pragma is a no-op inside a transaction: it is switched around it.
    const restoreKeys = m.foreignKeysOff && foreignKeysOn(db);
    if (restoreKeys) db.exec("PRAGMA foreign_keys = OFF");
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have applied it while we waited for the write lock.
      if (!isApplied.get(m.version)) {
        db.exec(typeof m.sql === "string" ? m.sql : m.sql(db));
        if (m.foreignKeysOff) checkForeignKeys(db);
        record.run(m.version, m.name, new Date().toISOString());
        applied.push(m.version);
      }
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw new Error(`migration ${m.version} (${m.name}) failed: ${errorMessage(err)}`, { cause: err });
    } finally {
      if (restoreKeys) db.exec("PRAGMA foreign_keys = ON");
    }
  }
  return applied;
}

function foreignKeysOn(db: DatabaseSync): boolean {
  return (db.prepare("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys === 1;
}

/** Throws when a row points at a parent row that is not there (a rebuild must leave none). */
function checkForeignKeys(db: DatabaseSync): void {
  const broken = db.prepare("PRAGMA foreign_key_check").all();
  if (broken.length > 0) {
    throw new Error(`${broken.length} row(s) break a foreign key: ${JSON.stringify(broken[0])}`);
  }
}

/** The highest applied migration version (0 for an empty database). */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null };
  return row.v ?? 0;
}
