import type { LoadedConfig } from "../config/load.ts";
import { startStation, type Station } from "../runtime/station.ts";
import { StationClient } from "./http.ts";

/** A runtime started inside the CLI process for one command (DESIGN §2, embedded mode). */
export interface Embedded {
  client: StationClient;
  station: Station;
  stop(): Promise<void>;
}

/** Starts the runtime in-process on a free loopback port, without announcing it in server.json. */
export async function startEmbedded(config: LoadedConfig): Promise<Embedded> {
  const values = structuredClone(config.values);
  values.server.host = "127.0.0.1";
  values.server.port = 0;
  // Another embedded command (cron overlap) may hold the NATS store: wait for it rather than fail.
  const station = await startStation({ ...config, values }, { announce: false, busyWaitMs: 5 * 60_000 });
  return { client: new StationClient(station.url), station, stop: station.stop };
}
