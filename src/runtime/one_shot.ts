/**
 * A one-shot station: embedded `stn workflow run FILE` (cron, CI) starts only what its run needs — the core
 * (ledger, NATS), the engine and the workflow-run routes (lean_station.ts) — when nothing else in the ledger
 * waits for a station; the agent service, MCP, sandboxes, files, schedulers, the environment sync and the
 * rest of the API are not started, and their modules not loaded (docs/design/process-model.md#embedded-mode).
 * When the run or the ledger needs more, the whole station starts on the same core.
 */

import type { LoadedConfig } from "../config/resolve.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { log } from "../log.ts";
import { startCore } from "./core.ts";
import type { OneShotStation } from "./lean_station.ts";
import type { StartStationOptions } from "./station.ts";

/**
 * Starts the station for one run of `definition` and nothing else: lean when the ledger and the run allow
 * it (lean_station.ts's `wholeStationNeed`), else the whole station (station.ts) on the core already started.
 */
export async function startOneShot(
  config: LoadedConfig,
  options: StartStationOptions,
  definition: unknown,
): Promise<OneShotStation> {
  // Loaded while the nats-server starts and the ledger opens.
  const loading = lazyImport<typeof import("./lean_station.ts")>("./lean_station.ts", import.meta.url);
  const core = await startCore(config, options);
  try {
    const lean = await loading;
    const why = lean.wholeStationNeed(core.db, config, definition);
    if (why === null) return await lean.startLean(core, config);
    log.debug(`starting the whole station: ${why}`);
    const station = await lazyImport<typeof import("./station.ts")>("./station.ts", import.meta.url);
    return await station.startStation(config, options, core);
  } catch (err) {
    await core.stop();
    throw err;
  }
}
