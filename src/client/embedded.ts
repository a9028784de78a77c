/** Embedded mode: a station started inside the CLI process for one command, and stopped after it. */

import type { LoadedConfig } from "../config/resolve.ts";
import { StationError } from "../errors.ts";
import { StationClient } from "./http.ts";

/** A station running in this process, as the CLI sees it (src/runtime/station.ts's Station is one). */
export interface LocalStation {
  /** Base URL of its API. */
  url: string;
  /** Its MCP endpoints, when started with `mcp: true`. */
  mcp?: { url: string; agentUrl: string };
  ctx: { nats: { managed: boolean; url: string } };
  /** Resolves with an error when a part the station cannot live without fails. */
  fatal: Promise<StationError>;
  stop(): Promise<void>;
}

/** A `stn worker` running in this process, as the CLI sees it (src/runtime/worker.ts's RunningWorker is one). */
export interface LocalWorker {
  worker: {
    id: string;
    name: string;
    inflight: { size: number };
    stats: { executed: number; released: number };
  };
  url: string;
  health?: { port: number };
  /** Drains (in-flight steps get `graceMs` to finish), then disconnects. */
  stop(graceMs: number): Promise<void>;
}

/**
 * The in-process runtime, handed to the CLI by its entry (src/stn.ts), so that cli/ and client/ never import
 * src/runtime/ (docs/design/layers.md): `stn serve`, `stn worker` and embedded mode start it through this.
 */
export interface Runtime {
  startStation(config: LoadedConfig, options: {
    announce: boolean;
    busyWaitMs?: number;
    busyExitCode?: number;
    mcp?: boolean;
    /** No warning when Docker is unreachable (embedded mode: a command that needs a sandbox says so). */
    quietSandbox?: boolean;
    /** `stn test`: timers on a virtual clock, sandboxes stubbed (docs/testing.md). */
    time?: "real" | "virtual";
    sandbox?: "docker" | "mock";
  }): Promise<LocalStation>;
  startWorker(config: LoadedConfig, settings: {
    queues: string[];
    concurrency: number;
    name?: string;
    port?: number;
  }): Promise<LocalWorker>;
}

/** A runtime started inside the CLI process for one command (docs/design/process-model.md#embedded-mode). */
export interface Embedded {
  client: StationClient;
  station: LocalStation;
  stop(): Promise<void>;
}

/** How long an embedded command waits for another stn on the same STATION_HOME (cron overlap). */
export const HOME_WAIT_MS = 5 * 60_000;

/**
 * Exit code of an embedded command that did not start because another stn holds STATION_HOME
 * (with --no-wait-lock at once, else after HOME_WAIT_MS): sysexits' EX_TEMPFAIL, "try again later".
 */
export const EXIT_HOME_BUSY = 75;

export interface EmbeddedOptions {
  /** Wait for another stn using this STATION_HOME to finish (default), or refuse at once. */
  waitLock?: boolean;
}

/** Starts the runtime in-process on a free loopback port, without announcing it in server.json. */
export async function startEmbedded(
  runtime: Runtime,
  config: LoadedConfig,
  options: EmbeddedOptions = {},
): Promise<Embedded> {
  const values = structuredClone(config.values);
  values.server.host = "127.0.0.1";
  values.server.port = 0;
  // Another embedded command (cron overlap) may hold the NATS store: queue behind it rather than fail.
  const wait = options.waitLock !== false;
  try {
    const station = await runtime.startStation({ ...config, values }, {
      announce: false,
      busyWaitMs: wait ? HOME_WAIT_MS : 0,
      busyExitCode: EXIT_HOME_BUSY,
      quietSandbox: true,
    });
    return { client: new StationClient(station.url), station, stop: station.stop };
  } catch (err) {
    if (!(err instanceof StationError) || err.code !== "station_home_busy") throw err;
    throw new StationError(err.code, `${err.message}; nothing was started`, {
      exitCode: EXIT_HOME_BUSY,
      details: err.details,
      hint: wait
        ? `it was still running after ${
          HOME_WAIT_MS / 60_000
        } minutes: try again later, or use another STATION_HOME`
        : "run again later (cron: the next run picks up), or drop --no-wait-lock to queue behind it",
    });
  }
}
