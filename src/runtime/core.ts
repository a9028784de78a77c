/**
 * What every station starts first, whatever else it runs: the checks that must hold, the ledger and its
 * durability, and NATS (managed or not) — and the list of closers that stops them in reverse order.
 */

import { join } from "node:path";
import type { LoadedConfig } from "../config/resolve.ts";
import { startCheckpointer } from "../db/checkpoint.ts";
import { type Database, openDatabase } from "../db/database.ts";
import { type Durability, processDurability, walDurability } from "../db/durability.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { hookProblems } from "../events/webhooks.ts";
import { isLoopback } from "../lib/loopback.ts";
import { log } from "../log.ts";
import { locateNatsServer } from "../nats/locate.ts";
import type { NatsConnection, NatsTarget } from "../nats/connection.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { ManagedNatsServer } from "../nats/server.ts";

/** How a station's core starts NATS (see StartStationOptions). */
export interface CoreOptions {
  busyWaitMs?: number;
  busyExitCode?: number;
}

type Closer = { name: string; close: () => void | Promise<void> };

/** The NATS client's modules, loaded while a managed nats-server starts rather than before it. */
const natsClient = () =>
  lazyImport<typeof import("../nats/connection.ts")>("../nats/connection.ts", import.meta.url);

/** A started core: the ledger and NATS, and how to stop everything registered on it so far. */
export interface StationCore {
  db: Database;
  durability: Durability;
  /** Resolves once every ledger commit so far is on disk (at once with `ledger.durability: normal`). */
  durable: () => Promise<void>;
  nats: { nc: NatsConnection; target: NatsTarget; server?: ManagedNatsServer };
  /** Resolves with an error when a part the station cannot live without fails (the managed nats-server dies). */
  fatal: Promise<StationError>;
  /** Aborted when the station begins to stop. */
  shutdown: AbortSignal;
  /** Registers a part to stop; parts stop in reverse order of registration. */
  closeWith(name: string, close: () => void | Promise<void>): void;
  /** Stops everything registered, in reverse order; safe to call twice. */
  stop(): Promise<void>;
}

/** Checks the settings that must hold before anything starts. */
function preflight(config: LoadedConfig): void {
  const { host, api_token, mcp_auth } = config.values.server;
  if (mcp_auth === "always" && !api_token) {
    throw usageError(
      "api_token_required",
      "server.mcp_auth is `always`, but there is no token to require",
      "set server.api_token in config.yaml or STATION_API_TOKEN (16+ characters, e.g. `openssl rand -hex 32`)",
    );
  }
  if (!isLoopback(host) && !api_token) {
    throw usageError(
      "api_token_required",
      `refusing to listen on ${host} without an API token: anyone who can reach it could run workflows and sandboxes`,
      "set server.api_token in config.yaml or STATION_API_TOKEN (16+ characters, e.g. `openssl rand -hex 32`), " +
        "or bind to 127.0.0.1",
    );
  }
  const hooks = hookProblems(config.values.events.hooks);
  if (hooks.length > 0) {
    throw usageError("config_invalid", hooks.join("; "), "fix the webhook mappings (docs/events.md)");
  }
}

/**
 * Checks the config, opens the ledger, starts the managed nats-server (if any) and connects, loading the NATS
 * client while the server starts; on any failure undoes what had started.
 */
export async function startCore(config: LoadedConfig, options: CoreOptions): Promise<StationCore> {
  preflight(config);
  const closers: Closer[] = [];
  const shutdown = new AbortController();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      shutdown.abort();
      for (const { name, close } of closers.reverse()) {
        try {
          await close();
        } catch (err) {
          log.warn(`stopping ${name} failed`, { error: errorMessage(err) });
        }
      }
    })();
  const closeWith = (name: string, close: () => void | Promise<void>) => void closers.push({ name, close });

  try {
    const db: Database = openDatabase(config.paths.db);
    closeWith("ledger", () => db.close());
    const level = config.values.ledger.durability;
    const durability = level !== "normal" && config.paths.db !== ":memory:"
      ? walDurability(db, config.paths.db)
      : processDurability;
    closeWith("ledger sync", () => durability.close());
    if (config.paths.db !== ":memory:") {
      const checkpointer = startCheckpointer(db, config.paths.db);
      closeWith("ledger checkpointer", () => checkpointer.stop());
    }

    // The NATS client's modules load while the child starts.
    const client = natsClient();
    const { target, server } = await startNats(config, options);
    // After the ledger's closers, so the server stops before the ledger closes (what runs until then may write).
    if (server) closeWith("nats-server", () => server.stop());
    let fatalResolve!: (e: StationError) => void;
    const fatal = new Promise<StationError>((r) => (fatalResolve = r));
    server?.exited.then((status) => {
      if (server.stopping) return;
      const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
      const lines = server.lastLines.slice(-3).map((l) => l.replace(/^\[\d+\] \S+ \S+ /, "")).join(" | ");
      fatalResolve(
        new StationError("nats_server_died", `the managed nats-server (pid ${server.pid}) ${how}`, {
          hint: `check what stopped it (OOM killer, a stray kill); its last lines: ${lines || "(none)"}`,
        }),
      );
    });

    const nc: NatsConnection = await (await client).connectNats(target);
    closeWith("nats connection", () => closeNats(nc));
    return {
      db,
      durability,
      durable: () => durability.durable(),
      nats: { nc, target, server },
      fatal,
      shutdown: shutdown.signal,
      closeWith,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startNats(
  config: LoadedConfig,
  options: CoreOptions,
): Promise<{ target: NatsTarget; server?: ManagedNatsServer }> {
  const nats = config.values.nats;
  if (nats.url) {
    const { natsTarget } = await natsClient();
    return { target: natsTarget({ ...nats, url: nats.url }) };
  }
  const bin = await locateNatsServer(nats.server_bin, { binDir: config.paths.binDir });
  const server = await ManagedNatsServer.start({
    bin: bin.path,
    storeDir: nats.store_dir ?? config.paths.natsDir,
    pidFile: join(config.paths.runDir, "nats.pid"),
    busyWaitMs: options.busyWaitMs,
    busyExitCode: options.busyExitCode,
  });
  log.debug("managed nats-server ready", {
    url: server.url,
    pid: server.pid,
    bin: bin.path,
    source: bin.source,
  });
  return { target: { url: server.url, ...server.credentials }, server };
}

async function closeNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  try {
    await nc.drain();
  } catch {
    await nc.close();
  }
}
