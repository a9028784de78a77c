/**
 * The station `stn test` runs its cases on: one embedded station on a temporary home holding a copy of the
 * environment under test, removed with everything in it when the suite ends.
 */

import { join } from "node:path";
import type { LoadedConfig } from "../config/resolve.ts";
import { stationPaths } from "../config/paths.ts";
import { StationClient } from "../client/http.ts";
import type { StationContext } from "../context.ts";
import type { VirtualTime } from "./virtual_time.ts";
import { usageError } from "../errors.ts";
import { seedToolCatalogue } from "./tool_catalogue.ts";

/** The kind of station a case needs: its clock (`realtime: true`: real) and its sandboxes (`sandbox: mock`). */
export interface StationMode {
  time: "real" | "virtual";
  sandbox: "docker" | "mock";
}

/** The station mode a case runs on. */
export function caseMode(c: { realtime?: boolean; sandbox?: "mock" }): StationMode {
  return { time: c.realtime ? "real" : "virtual", sandbox: c.sandbox ?? "docker" };
}

/** A station as a suite drives it (the runtime's Station is one). */
export interface SuiteStation {
  url: string;
  ctx: StationContext;
  /** Skipped time, on a station started with `time: "virtual"`. */
  time?: VirtualTime;
  stop(): Promise<void>;
}

/** Starts an embedded station: the runtime's startStation, handed in by the caller (testing/ never imports runtime/). */
export type StartStation = (
  config: LoadedConfig,
  options: { announce: boolean } & StationMode,
) => Promise<SuiteStation>;

/** What a suite's stations are made from: the user's config, the environment under test, its cassettes. */
export interface SuiteSource {
  config: LoadedConfig;
  environment: string;
  cassettes: Array<{ path: string; text: string }>;
  start: StartStation;
}

/**
 * The stations of one suite, one per mode its cases need, each started on first use; `stop` removes them all.
 * `target` turns a started station into what the runner calls.
 */
export function stationPool<T>(
  source: SuiteSource,
  target: (s: TestStation) => T,
): { get(mode: StationMode): Promise<T>; stop(): Promise<void> } {
  const started = new Map<string, Promise<TestStation>>();
  return {
    get: async (mode) => {
      const key = `${mode.time}/${mode.sandbox}`;
      if (!started.has(key)) started.set(key, startTestStation(source, mode));
      return target(await started.get(key)!);
    },
    stop: async () => {
      for (const s of started.values()) await (await s.catch(() => undefined))?.stop();
    },
  };
}

/** A station started for one suite, and how to remove it. */
export interface TestStation {
  client: StationClient;
  station: SuiteStation;
  home: string;
  stop(): Promise<void>;
}

/** Copies a folder tree (files and folders only; links are not followed out of it). */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const src = join(from, e.name), dest = join(to, e.name);
    if (e.isDirectory) await copyTree(src, dest);
    else if (e.isFile) await Deno.copyFile(src, dest);
  }
}

/**
 * Starts an embedded station on a fresh temporary home: the user's settings (model, providers, engine) with
 * the home's paths replaced, and `environment` copied from the user's environments folder, synced at start;
 * its timers on a virtual clock (skipped time) or the wall clock.
 */
export async function startTestStation(suite: SuiteSource, mode: StationMode): Promise<TestStation> {
  const { config, environment, cassettes, start } = suite;
  const source = join(config.paths.environments, environment);
  try {
    await Deno.stat(source);
  } catch {
    throw usageError(
      "environment_not_found",
      `environment ${environment} not found at ${source}`,
      "give --env NAME of a folder under environments/ (`stn env list`)",
    );
  }
  const home = await Deno.makeTempDir({ prefix: "stn-test-" });
  const remove = () => Deno.remove(home, { recursive: true }).catch(() => {});
  try {
    const paths = stationPaths(home);
    await copyTree(source, join(paths.environments, environment));
    const values = structuredClone(config.values);
    values.server.host = "127.0.0.1";
    values.server.port = 0;
    values.workflows.environment = environment;
    const station = await start({ values, paths, file: config.file, warnings: [] }, {
      announce: false,
      ...mode,
    });
    seedToolCatalogue(station.ctx.db, environment, config.paths.db, cassettes);
    return {
      client: new StationClient(station.url, { token: values.server.api_token }),
      station,
      home,
      stop: async () => {
        await station.stop();
        await remove();
      },
    };
  } catch (err) {
    await remove();
    throw err;
  }
}
