import { join } from "node:path";

/** Where stn keeps its state (docs/design/process-model.md#the-data-directory). */
export interface StationPaths {
  home: string;
  config: string;
  db: string;
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

/** The files and folders under a station home. */
export function stationPaths(home: string): StationPaths {
  return {
    home,
    config: join(home, "config.yaml"),
    db: join(home, "station.db"),
    natsDir: join(home, "nats"),
    runDir: join(home, "run"),
    serverJson: join(home, "run", "server.json"),
    environments: join(home, "environments"),
    binDir: join(home, "bin"),
    logsDir: join(home, "logs"),
  };
}
