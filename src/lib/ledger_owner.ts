/**
 * Whose SQLite file a path holds — stn's ledger, another program's database (Station's `station.db`), or
 * nothing yet — found without writing a byte: an ordinary read-only open of a WAL database leaves `-wal`
 * and `-shm` files behind, so the file is read as immutable (a copy when a `-wal` holds unmerged pages).
 */

import { DatabaseSync } from "node:sqlite";
import { basename, join } from "node:path";

/** absent: no file (or an empty one stn made); stn: stn's ledger (it has station_meta); other: not stn's. */
export type LedgerOwner = "absent" | "stn" | "other";

function size(path: string): number | null {
  try {
    return Deno.statSync(path).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** An immutable, read-only view of the file: SQLite creates nothing beside it and locks nothing. */
function immutableUri(path: string): string {
  return "file:" + path.split("/").map(encodeURIComponent).join("/") + "?mode=ro&immutable=1";
}

/** Whether the file holds stn's marker (the station_meta table with its created_at row); null: not SQLite. */
function hasStnMarker(path: string): boolean | null {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(immutableUri(path), { readOnly: true });
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'station_meta'")
      .get();
    if (!table) return false;
    return db.prepare("SELECT 1 FROM station_meta WHERE key = 'created_at'").get() !== undefined;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

/** The marker check on a copy of the file and its -wal (pages not yet merged into the file itself). */
function markerWithWal(path: string): boolean | null {
  const dir = Deno.makeTempDirSync({ prefix: "stn-ledger-check-" });
  try {
    const copy = join(dir, basename(path));
    Deno.copyFileSync(path, copy);
    Deno.copyFileSync(`${path}-wal`, `${copy}-wal`);
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(copy, { readOnly: true });
      return db.prepare("SELECT 1 FROM station_meta WHERE key = 'created_at'").get() !== undefined;
    } catch {
      return null;
    } finally {
      db?.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** Whose database `path` is, read without changing it or creating anything beside it. */
export function ledgerOwner(path: string): LedgerOwner {
  const bytes = size(path);
  if (bytes === null) return "absent";
  const wal = size(`${path}-wal`);
  // stn creates its ledger empty (0600) before SQLite writes it; a crash before the first checkpoint leaves
  // the pages in the -wal.
  if (bytes === 0 && !wal) return "absent";
  if (bytes > 0 && hasStnMarker(path)) return "stn";
  if (wal && markerWithWal(path)) return "stn";
  return "other";
}
