/**
 * The `stn` program: the CLI with the in-process runtime wired in. cli/ and client/ reach a station over
 * HTTP and never import src/runtime/ (docs/design/layers.md); this entry hands them the runtime they start
 * for `stn serve`, `stn worker` and embedded mode.
 */

import { lazyImport } from "./lib/lazy_import.ts";
import type { Runtime } from "./client/embedded.ts";
import { runCli as runWith } from "./cli/main.ts";

/** Starts the runtime's parts, each loaded only when a command starts it (client commands never pay for it). */
const RUNTIME: Runtime = {
  startStation: async (config, { oneShot, ...options }) =>
    oneShot
      // Its own module, so that a lean one-shot never loads the whole station's.
      ? (await lazyImport<typeof import("./runtime/one_shot.ts")>("./runtime/one_shot.ts", import.meta.url))
        .startOneShot(config, options, oneShot.definition)
      : (await lazyImport<typeof import("./runtime/station.ts")>("./runtime/station.ts", import.meta.url))
        .startStation(config, options),
  startWorker: async (config, settings) =>
    (await lazyImport<typeof import("./runtime/worker.ts")>("./runtime/worker.ts", import.meta.url))
      .startWorker(config, settings),
};

/** Runs `stn` with these arguments and returns the process exit code. */
export function runCli(args: string[]): Promise<number> {
  return runWith(args, RUNTIME);
}
