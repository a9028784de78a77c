/**
 * The flow-control end-to-end setup (docs/workflows.md#flow-control): a station running one step at a time (so
 * steps spread to the workers) and 2 `stn worker`s on a 3-node NATS cluster, steps calling a slow HTTP server;
 * and what the tests read back: a worker's executed steps and the ledger's events.
 */

import { DatabaseSync } from "node:sqlite";
import { StationClient } from "../../src/client/http.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { assert } from "./assert.ts";
import { type DelayServer, delayServer, HTTP_STN, startCluster, startWorkerProcess } from "./cluster.ts";
import type { TempHome } from "./home.ts";
import { startServe, waitFor } from "./stn.ts";

/** The running parts; `stop` ends them all, workers first. */
export interface FlowCluster {
  client: StationClient;
  /** The HTTP server the steps call (30 ms per answer). */
  io: DelayServer;
  workers: { stderr(): string }[];
  /** The station's log (for a failure's message). */
  stationLog(): string;
  stop(): Promise<void>;
}

/** Starts the cluster, the station on `home` and two workers, once both workers are listed. */
export async function startFlowCluster(home: TempHome): Promise<FlowCluster> {
  const io = await delayServer(30);
  const cluster = await startCluster();
  const env = { ...home.env, STN_ENGINE_LEASE: "3s", STN_ENGINE_ACK_WAIT: "4s" };
  const stops: (() => Promise<unknown>)[] = [];
  const workers: { stderr(): string }[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
    await io.close();
    await cluster.stop();
  };
  try {
    const serve = await startServe({
      env: { ...env, STN_ENGINE_WORKERS: "1" },
      home: home.home,
      main: HTTP_STN,
      args: ["--port", "0", "--nats-url", cluster.urls],
    });
    stops.push(() => serve.stop());
    const client = new StationClient(serve.url);
    for (const name of ["w1", "w2"]) {
      const w = startWorkerProcess({
        env,
        natsUrl: cluster.urls,
        name,
        args: ["--concurrency", "4", "--port", "0"],
      });
      stops.push(() => w.stop());
      workers.push(w);
    }
    assert(await waitFor(async () => (await listWorkers(client)).workers.length === 2, 30_000), "2 workers");
    return { client, io, workers, stationLog: () => serve.stderr(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Steps a `stn worker` executed, from its /metrics. */
export async function executedBy(w: { stderr(): string }): Promise<number> {
  const metrics = await (await fetch(/health=(\S+)\/health/.exec(w.stderr())![1] + "/metrics")).text();
  return Number(/stn_worker_steps_executed_total\{[^}]*\} (\d+)/.exec(metrics)![1]);
}

/** Whether the ledger recorded some run event of this type. */
export function eventRecorded(dbPath: string, type: string): boolean {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare("SELECT 1 FROM run_events WHERE type = ? LIMIT 1").get(type) !== undefined;
  } finally {
    db.close();
  }
}
