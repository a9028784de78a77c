import { dirname, resolve } from "./path.ts";

/**
 * Files and folders only stn's user may read: $STATION_HOME holds the ledger (every run's input and
 * output), the NATS store and credentials, variables and secrets. What stn creates gets its mode set
 * explicitly (0700 folders, 0600 files), whatever the umask; what exists already is never changed —
 * it may be the user's, and `stn doctor` says when it is readable by others.
 */

/** Mode of the folders stn creates: its user only. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of the files stn creates for itself: its user only. */
export const PRIVATE_FILE_MODE = 0o600;

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Creates `path` and its missing parents as 0700 folders; folders that exist are left as they are. */
export function makePrivateDir(path: string): void {
  const missing: string[] = [];
  for (let dir = resolve(path); !exists(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  for (const dir of missing) {
    try {
      Deno.mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    } catch (err) {
      // Another stn process made it first: then it is that one's to set.
      if (err instanceof Deno.errors.AlreadyExists) continue;
      throw err;
    }
    // mkdir's mode passes through the umask; set it exactly.
    Deno.chmodSync(dir, PRIVATE_DIR_MODE);
  }
}

/**
 * Creates `path` as an empty 0600 file when it does not exist (true when it did so), before anything is
 * written to it; an existing file is left as it is.
 */
export function createPrivateFile(path: string): boolean {
  try {
    Deno.openSync(path, { write: true, createNew: true, mode: PRIVATE_FILE_MODE }).close();
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  }
  // open's mode passes through the umask; set it exactly.
  Deno.chmodSync(path, PRIVATE_FILE_MODE);
  return true;
}

/** The permission bits of `path` when others (group or world) may use it; undefined when not, or absent. */
export function openToOthers(path: string): number | undefined {
  let mode: number | null;
  try {
    mode = Deno.statSync(path).mode;
  } catch {
    return undefined;
  }
  return mode !== null && (mode & 0o077) !== 0 ? mode & 0o777 : undefined;
}
