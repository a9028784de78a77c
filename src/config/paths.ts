import { join } from "../lib/path.ts";
import { ledgerOwner } from "../lib/ledger_owner.ts";

/** Where stn keeps its state (docs/design/process-model.md#the-data-directory). */
export interface StationPaths {
  home: string;
  config: string;
  /** The ledger: stn.db, or station.db where an older stn made it (docs/migrating-from-station.md#the-database). */
  db: string;
  /** A station.db in this home that is not stn's (the Go Station's): never opened for writing; null if none. */
  foreignDb: string | null;
  natsDir: string;
  runDir: string;
  serverJson: string;
  environments: string;
  /** `stn serve`'s log (stn.log and its rotated stn.log.1…), private to the user. */
  logsDir: string;
  /** Programs stn extracts from its own binary (the embedded nats-server); stn owns this folder. */
  binDir: string;
}

/** Resolves $STATION_HOME: STATION_HOME, STATION_CONFIG_DIR (the Go project's name), XDG, ~/.config/station. */
export function resolveHome(env: Record<string, string | undefined> = Deno.env.toObject()): string {
  if (env.STATION_HOME) return env.STATION_HOME;
  if (env.STATION_CONFIG_DIR) return env.STATION_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "station");
  const home = env.HOME ?? env.USERPROFILE ?? ".";
  return join(home, ".config", "station");
}

/** The ledger's file name in a new home; `station.db` is Station's (the Go project's) own. */
export const LEDGER_FILE = "stn.db";
/** The ledger's name before stn took its own: still stn's ledger when it carries stn's marker. */
export const LEGACY_LEDGER_FILE = "station.db";

/** Whether path names something (as node:fs existsSync says, without loading node:fs: ~15 ms per command). */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The ledger of a home: stn.db when it exists; else a station.db that carries stn's marker (made by an
 * stn before it named its ledger stn.db); else stn.db, beside whatever station.db Station left there.
 */
function ledgerPaths(home: string): { db: string; foreignDb: string | null } {
  const db = join(home, LEDGER_FILE);
  const legacy = join(home, LEGACY_LEDGER_FILE);
  const legacyOwner = ledgerOwner(legacy);
  const foreignDb = legacyOwner === "other" ? legacy : null;
  if (exists(db) || legacyOwner !== "stn") return { db, foreignDb };
  return { db: legacy, foreignDb };
}

/** The config file's name in a home. */
const CONFIG_FILE = "config.yaml";

/** The config file of a home (it may not exist). */
export function configFileOf(home: string): string {
  return join(home, CONFIG_FILE);
}

/** The files and folders under a station home. */
export function stationPaths(home: string): StationPaths {
  return {
    home,
    config: configFileOf(home),
    ...ledgerPaths(home),
    natsDir: join(home, "nats"),
    runDir: join(home, "run"),
    serverJson: join(home, "run", "server.json"),
    environments: join(home, "environments"),
    binDir: join(home, "bin"),
    logsDir: join(home, "logs"),
  };
}
