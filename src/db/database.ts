/** The ledger: opening the SQLite file (WAL, migrations applied) and write transactions with savepoints. */

import { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";
import { errorMessage, StationError } from "../errors.ts";
import { createPrivateFile, makePrivateDir } from "../lib/private_files.ts";
import { ledgerOwner } from "../lib/ledger_owner.ts";
import { migrate } from "./migrate.ts";
import { MIGRATIONS } from "./migrations/index.ts";

/** The ledger handle: a synchronous node:sqlite connection. */
export type Database = DatabaseSync;

export interface OpenDatabaseOptions {
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
}

/** Opens (creating if needed) the SQLite ledger in WAL mode and applies pending migrations. */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): Database {
  if (path !== ":memory:") {
    // Another program's database (Station's station.db) is never opened for writing: checked before SQLite
    // or a chmod could change a byte of it.
    if (ledgerOwner(path) === "other") {
      throw new StationError("ledger_foreign", `${path} is not stn's ledger (another program's database)`, {
        hint: "stn never writes to a database it did not create; its own ledger is stn.db in STATION_HOME " +
          "(docs/migrating-from-station.md#the-database)",
      });
    }
    makePrivateDir(dirname(path));
    // SQLite would create the ledger 0644 (world-readable under umask 022); its -wal and -shm get the
    // ledger's own mode, so a ledger created 0600 first keeps all three private. An existing one is kept.
    createPrivateFile(path);
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (err) {
    throw new StationError("db_open_failed", `cannot open ledger ${path}: ${errorMessage(err)}`, {
      hint: "check that the directory is writable (STATION_HOME)",
      cause: err,
    });
  }
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
  db.exec("PRAGMA journal_mode = WAL");
  // Commits never fsync by themselves: in the `fsync` mode what acknowledges them waits for one shared sync
  // of the WAL instead (durability.ts), which the engine's main thread does not wait for.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db, MIGRATIONS);
  return db;
}

const depth = new WeakMap<Database, number>();

/**
 * Runs fn inside one write transaction (BEGIN IMMEDIATE, so the write lock is taken up front and
 * concurrent processes queue on busy_timeout instead of failing mid-way). Nested calls use savepoints.
 */
export function transaction<T>(db: Database, fn: () => T): T {
  const level = depth.get(db) ?? 0;
  const savepoint = `sp_${level}`;
  db.exec(level === 0 ? "BEGIN IMMEDIATE" : `SAVEPOINT ${savepoint}`);
  depth.set(db, level + 1);
  try {
    const result = fn();
    db.exec(level === 0 ? "COMMIT" : `RELEASE ${savepoint}`);
    return result;
  } catch (err) {
    db.exec(level === 0 ? "ROLLBACK" : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
    throw err;
  } finally {
    depth.set(db, level);
  }
}
