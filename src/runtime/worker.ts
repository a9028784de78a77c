/** Assembling a `stn worker`: its NATS connection, its step worker, its health server. */

import type { LoadedConfig } from "../config/resolve.ts";
import { errorMessage, usageError } from "../errors.ts";
import { within } from "../lib/async.ts";
import { log } from "../log.ts";
import { openDatabase } from "../db/database.ts";
import { FileStore } from "../files/store.ts";
import { connectNats, type NatsConnection, natsTarget } from "../nats/connection.ts";
import type { SandboxService } from "../sandbox/service.ts";
import { startSandboxService } from "../sandbox/start.ts";
import { hostRule } from "../server/origin.ts";
import { clientTimeouts } from "../server/slow_clients.ts";
import { type HealthServer, serveHealth } from "../workers/health.ts";
import { StepWorker } from "../workers/worker.ts";
import { WorkerAgents } from "../workers/agent_steps.ts";
import { McpPool } from "../mcp/mod.ts";
import { hostname } from "node:os";
import { QUEUE_NAME } from "../contract/task_queue.ts";

/** `stn worker` flags beyond the config. */
export interface WorkerSettings {
  queues: string[];
  concurrency: number;
  name?: string;
  /** Health and metrics port (undefined: none). */
  port?: number;
}

/** A running `stn worker`. */
export interface RunningWorker {
  worker: StepWorker;
  url: string;
  health?: HealthServer;
  /** Drains (in-flight steps get `graceMs` to finish, the rest are handed back), then disconnects. */
  stop(graceMs: number): Promise<void>;
}

/** Connects to the NATS server or cluster of nats.url and starts pulling steps of the given queues. */
export async function startWorker(config: LoadedConfig, settings: WorkerSettings): Promise<RunningWorker> {
  const nats = config.values.nats;
  if (!nats.url) {
    throw usageError(
      "worker_needs_nats",
      "stn worker needs the NATS server or cluster its station uses",
      "pass --nats-url nats://host:4222[,nats://host2:4222] (or set nats.url / STN_NATS_URL)",
    );
  }
  const bad = settings.queues.find((q) => !QUEUE_NAME.test(q));
  if (bad !== undefined) {
    throw usageError(
      "invalid_queue",
      `invalid queue name ${JSON.stringify(bad)}`,
      "a queue name is lowercase letters, digits, _ and - (e.g. --queue gpu)",
    );
  }
  const target = natsTarget({ ...nats, url: nats.url });
  const nc = await connectNats(target, "stn-worker");
  let sandbox: SandboxService | undefined;
  try {
    sandbox = await startSandbox(config, nc);
  } catch (err) {
    await nc.close();
    throw err;
  }
  const e = config.values.engine;
  // Agent steps' MCP servers, shared across this worker's agent runs (as on a station).
  const pool = new McpPool({ max: config.values.mcp.pool_max, idleMs: config.values.mcp.idle_timeout });
  const name = settings.name ?? `${hostname()}:${Deno.pid}`;
  const agents = new WorkerAgents({
    nc,
    machine: name,
    config: config.values,
    env: Deno.env.toObject(),
    pool,
    sandbox,
  });
  const worker = new StepWorker(nc, {
    name,
    queues: settings.queues,
    concurrency: settings.concurrency,
    ackWaitMs: e.ack_wait,
    maxDeliver: e.max_deliver,
    sandbox,
    agents,
  });
  let health: HealthServer | undefined;
  try {
    await worker.start();
    if (settings.port !== undefined) {
      const server = config.values.server;
      health = await serveHealth(worker, settings.concurrency, {
        host: server.host,
        port: settings.port,
        hosts: hostRule(server),
        timeouts: clientTimeouts(server),
      });
    }
  } catch (err) {
    await nc.close();
    throw err;
  }
  return {
    worker,
    url: target.url,
    health,
    stop: async (graceMs) => {
      await worker.drain(graceMs);
      await health?.close();
      await pool.close();
      if (sandbox) {
        sandbox.stop();
        // Its sessions live in this process only: nobody else could close their containers.
        for (const s of sandbox.list()) await sandbox.close(s.id, "worker_stopped").catch(() => {});
      }
      // Bounded: with its NATS server gone the drain would wait for a reconnect that may never come.
      await within(nc.drain(), 5000, () => {
        throw new Error("nats drain timed out");
      }).catch(async (err) => {
        log.debug("nats drain failed", { error: errorMessage(err) });
        await nc.close();
      });
    },
  };
}

/**
 * The worker's own sandboxes (sandbox.enabled and a reachable Docker Engine): sessions are kept in an
 * in-memory table, not a ledger, and end with their run (the station says when) or with the worker.
 */
async function startSandbox(config: LoadedConfig, nc: NatsConnection): Promise<SandboxService | undefined> {
  if (!config.values.sandbox.enabled) return undefined;
  const files = await FileStore.open(nc, config.values.storage);
  const { service, unavailable } = await startSandboxService(
    config.values.sandbox,
    openDatabase(":memory:"),
    files,
  );
  if (unavailable) {
    log.warn(`sandbox steps will fail here: ${unavailable.message}`, { fix: unavailable.hint });
  }
  return service;
}
