import { loadConfig } from "../../src/config/load.ts";
import { startStation, type Station } from "../../src/runtime/station.ts";
import { StationClient } from "../../src/client/http.ts";
import { setLogLevel } from "../../src/log.ts";
import { type TempHome, tempHome } from "./home.ts";

/** An in-process station on a temp home and a free port, with a client for its API. */
export interface TestStation {
  station: Station;
  client: StationClient;
  home: TempHome;
  /** Stops the station and removes its home. */
  close(): Promise<void>;
}

/** Starts a real station (real nats-server, real SQLite file, real HTTP) for API-level tests. */
export async function startTestStation(
  options: { configYaml?: string; env?: Record<string, string>; home?: TempHome; time?: "real" | "virtual" } =
    {},
): Promise<TestStation> {
  setLogLevel("warn");
  const home = options.home ?? await tempHome();
  if (options.configYaml) home.writeConfig(options.configYaml);
  const config = loadConfig({ env: { ...home.env, ...options.env }, flags: { "server.port": 0 } });
  const station = await startStation(config, { announce: false, time: options.time });
  const token = config.values.server.api_token;
  return {
    station,
    client: new StationClient(station.url, { token }),
    home,
    close: async () => {
      await station.stop();
      if (!options.home) await home.cleanup();
    },
  };
}
