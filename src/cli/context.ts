/** What every command shares: the global options, the server it talks to (or an embedded one), its client. */

import type { Command } from "./command.ts";
import { discoverTarget, type Target } from "../client/discovery.ts";
import { type Runtime, startEmbedded } from "../client/embedded.ts";
import { StationClient } from "../client/http.ts";
import type { LoadConfigOptions, LoadedConfig } from "../config/resolve.ts";
import { clientSettings } from "../config/client_settings.ts";
import { exists } from "../config/paths.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { StationError } from "../errors.ts";
import { log, LOG_LEVELS, setLogFormat, setLogLevel } from "../log.ts";
import { note } from "./output.ts";

/** Options every command accepts. */
export interface GlobalOptions {
  station?: string;
  json?: boolean;
  config?: string;
  /** false with --no-wait-lock: an embedded command refuses at once when STATION_HOME is busy. */
  waitLock?: boolean;
  /** false with --no-color */
  color?: boolean;
}

const runtimes = new WeakMap<Command, Runtime>();

/** Gives a program the in-process runtime its commands start (buildProgram, from the entry's). */
export function useRuntime(program: Command, runtime: Runtime): void {
  runtimes.set(program, runtime);
}

/** The in-process runtime of the command's program. */
export function runtimeOf(cmd: Command): Runtime {
  let root = cmd;
  while (root.parent) root = root.parent;
  const runtime = runtimes.get(root);
  if (!runtime) {
    throw new StationError("internal_error", "this stn program was built without its runtime (src/stn.ts)");
  }
  return runtime;
}

/** The global options as seen from any subcommand. */
export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/** Whether the command prints JSON for scripts (the global --json). */
export function jsonMode(cmd: Command): boolean {
  return Boolean(globals(cmd).json);
}

// A command may load its config twice (embedded flags): each warning is said once per process.
const warned = new Set<string>();

/**
 * Loads config for a command (flags are dotted config paths), applies its log level and says its warnings.
 * The YAML reader (src/config/load.ts) is imported only when there is a config file to read, and the config's
 * schema (src/config/resolve.ts) only by a command that needs more than a client's settings.
 */
export async function commandConfig(
  cmd: Command,
  flags: Record<string, unknown> = {},
): Promise<LoadedConfig> {
  const options: LoadConfigOptions = { configPath: globals(cmd).config, flags };
  const { configFilePath, resolveConfig } = await lazyImport<typeof import("../config/resolve.ts")>(
    "../config/resolve.ts",
    import.meta.url,
  );
  const config = options.configPath !== undefined || exists(configFilePath(options))
    ? (await lazyImport<typeof import("../config/load.ts")>("../config/load.ts", import.meta.url)).loadConfig(
      options,
    )
    : resolveConfig(options, null);
  for (const w of config.warnings) {
    if (warned.has(w)) continue;
    warned.add(w);
    note((s) => `${s.yellow("warning:")} ${w}`);
  }
  setLogLevel(config.values.log.level);
  setLogFormat(config.values.log.format);
  return config;
}

/** A numeric flag as a number when it is one; otherwise the raw text, so config validation names it. */
export function numberFlag(value: string | undefined): number | string | undefined {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * Runs fn against the server the command should talk to (docs/design/process-model.md#finding-a-server):
 * --station, STATION_URL, a live server.json, or an in-process runtime started for this command and stopped
 * after it.
 */
export async function withStation<T>(
  cmd: Command,
  fn: (client: StationClient, target: Target) => Promise<T>,
  options: { embeddedFlags?: Record<string, unknown>; oneShot?: { definition: unknown } } = {},
): Promise<T> {
  // A client's settings alone when they can be had without the whole config (src/config/client_settings.ts).
  const settings = clientSettings(globals(cmd).config);
  if (settings) {
    setLogLevel(settings.log.level);
    setLogFormat(settings.log.format);
  }
  let config = settings ? undefined : await commandConfig(cmd);
  const paths = settings?.paths ?? config!.paths;
  const target = await discoverTarget({ station: globals(cmd).station, paths });
  const token = Deno.env.get("STATION_API_TOKEN") ?? target.token ??
    (settings ? settings.apiToken : config!.values.server.api_token);
  if (target.url) return fn(new StationClient(target.url, { token }), target);

  config ??= await commandConfig(cmd);
  const embeddedConfig = options.embeddedFlags ? await commandConfig(cmd, options.embeddedFlags) : config;
  // An embedded runtime's own info lines are noise on a script's stderr.
  if (LOG_LEVELS.indexOf(config.values.log.level) < LOG_LEVELS.indexOf("warn")) setLogLevel("warn");
  log.debug("no server found; starting an embedded runtime");
  const embedded = await startEmbedded(runtimeOf(cmd), embeddedConfig, {
    waitLock: globals(cmd).waitLock,
    oneShot: options.oneShot,
  });
  // Ctrl-C or a SIGTERM from cron must not leave the embedded nats-server behind.
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const onSignal = () => {
    embedded.stop().finally(() => Deno.exit(130));
  };
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    return await fn(embedded.client, { source: "embedded", url: embedded.station.url });
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
    await embedded.stop();
  }
}
