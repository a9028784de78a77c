/**
 * Whose SQLite file a path holds — stn's ledger, another program's database (Station's `station.db`), or
 * nothing yet — found without writing a byte: an ordinary read-only open of a WAL database leaves `-wal`
 * and `-shm` files behind, so the file is read as immutable (a copy when a `-wal` holds unmerged pages).
 */

import { DatabaseSync } from "node:sqlite";
import { basename, join } from "./path.ts";
import { StationError } from "../errors.ts";

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

/** stn: its marker; none: tables, none of them stn's; empty: no table yet (stn's first one at most). */
type Marker = "stn" | "none" | "empty" | "unreadable";

/** Reads stn's marker (the station_meta table with its created_at row) from an SQLite file. */
function readMarker(uri: string): Marker {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(uri, { readOnly: true });
    const tables =
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
        .map((t) => t.name);
    if (tables.includes("station_meta")) {
      return db.prepare("SELECT 1 FROM station_meta WHERE key = 'created_at'").get() !== undefined
        ? "stn"
        : "none";
    }
    return tables.every((t) => t === "schema_migrations") ? "empty" : "none";
  } catch {
    return "unreadable";
  } finally {
    db?.close();
  }
}

/** The marker read from a copy of the file and its -wal (pages not yet merged into the file itself). */
function markerOfCopy(path: string): Marker {
  const dir = Deno.makeTempDirSync({ prefix: "stn-ledger-check-" });
  try {
    const copy = join(dir, basename(path));
    Deno.copyFileSync(path, copy);
    try {
      Deno.copyFileSync(`${path}-wal`, `${copy}-wal`);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    return readMarker(copy);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

const SQLITE_HEADER = "SQLite format 3\0";

function isSqliteFile(path: string): boolean {
  const file = Deno.openSync(path);
  try {
    const head = new Uint8Array(16);
    const n = file.readSync(head) ?? 0;
    return n === 16 && new TextDecoder().decode(head) === SQLITE_HEADER;
  } finally {
    file.close();
  }
}

/**
 * Whose database `path` is, read without changing it or creating anything beside it. The file itself is read
 * first (a ledger's marker was merged into it long ago); only when it cannot decide and a -wal exists is a copy
 * of both read. A file SQLite cannot read at that moment (another process in the middle of a checkpoint) is
 * read again; if it stays unreadable the answer is an error rather than a guess, since a wrong guess would
 * start a second ledger.
 */
export function ledgerOwner(path: string): LedgerOwner {
  const bytes = size(path);
  if (bytes === null) return "absent";
  const wal = size(`${path}-wal`);
  // stn creates its ledger empty (0600) before SQLite writes it.
  if (bytes === 0 && !wal) return "absent";
  if (bytes > 0 && !isSqliteFile(path)) return "other";
  for (let attempt = 1; attempt <= 5; attempt++) {
    let marker = bytes > 0 ? readMarker(immutableUri(path)) : "empty";
    if (wal && (marker === "empty" || marker === "unreadable")) marker = markerOfCopy(path);
    if (marker === "stn") return "stn";
    if (marker === "none") return "other";
    // No table at all: nothing to lose, and not a ledger to keep using.
    if (marker === "empty") return "absent";
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50 * attempt);
  }
  throw new StationError("ledger_unreadable", `${path}: cannot tell whether it is stn's ledger`, {
    hint:
      "another program may be writing it; try again — stn writes neither to it nor to a new ledger until it can tell",
  });
}
