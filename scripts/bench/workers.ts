/**
 * Scale-out benchmark (docs/workers.md), on a 3-node NATS cluster on loopback (scripts/nats-cluster):
 *   (a) throughput of I/O-bound steps (an HTTP GET answered after 250 ms by a local server) with 1, 2
 *       and 3 `stn worker` processes (concurrency 5 each), as steps/s and the ratio to one worker;
 *   (b) the per-step overhead of the remote hop: a 20-step transform chain run by the station's own
 *       workers vs. by a `stn worker` (same station, same cluster, same run of this script): time per
 *       step, median over the chains.
 *
 *   deno run -A scripts/bench/workers.ts [runs per worker=100] [chains=10]
 */
import { loadConfig } from "../../src/config/load.ts";
import type { Database } from "../../src/db/database.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { definitionSchema, WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import { registerStepType } from "../../src/workflows/steps/registry.ts";
import {
  delayServer,
  startCluster,
  startWorkerProcess,
  type WorkerProcess,
} from "../../tests/helpers/cluster.ts";
import { httpGet } from "../../tests/helpers/http_step.ts";

const RUNS_PER_WORKER = Number(Deno.args[0] ?? 100);
const CHAINS = Number(Deno.args[1] ?? 10);
const DELAY_MS = 250;
const CONCURRENCY = 5;

registerStepType(httpGet);
setLogLevel("warn");
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Waits until these runs ended; throws unless all completed. */
async function untilDone(db: Database, ids: string[]): Promise<void> {
  const marks = ids.map(() => "?").join(",");
  const left = db.prepare(
    `SELECT COUNT(*) AS n FROM workflow_runs WHERE id IN (${marks}) AND status NOT IN ('completed','failed','canceled')`,
  );
  while ((left.get(...ids) as { n: number }).n > 0) await new Promise((r) => setTimeout(r, 100));
  const bad = db.prepare(
    `SELECT COUNT(*) AS n FROM workflow_runs WHERE id IN (${marks}) AND status != 'completed'`,
  );
  const n = (bad.get(...ids) as { n: number }).n;
  if (n) throw new Error(`${n} runs did not complete`);
}

const cluster = await startCluster();
const home = await Deno.makeTempDir({ prefix: "stn-bench-workers-" });
const io = await delayServer(DELAY_MS);
const workers: WorkerProcess[] = [];
const config = loadConfig({
  env: { STATION_HOME: home },
  flags: { "server.port": 0, "nats.url": cluster.urls, "engine.workers": CONCURRENCY },
});
const station = await startStation(config, { announce: false });
const { engine, db } = station.ctx;
try {
  const addWorker = async (queues: string[]) => {
    const w = startWorkerProcess({
      env: { STATION_HOME: home },
      natsUrl: cluster.urls,
      name: `w${workers.length + 1}`,
      args: [...queues.flatMap((q) => ["--queue", q]), "--concurrency", String(CONCURRENCY)],
    });
    workers.push(w);
    while (engine.workers().length < workers.length) await new Promise((r) => setTimeout(r, 100));
  };

  // (a) throughput with 1, 2, 3 workers: runs are queued while the I/O is held, then released at once.
  // definitionSchema(), not the WorkflowDefinition built at import: it knows the http_get type registered above.
  const scale = definitionSchema().parse({
    id: "scale",
    defaults: { queue: "scale" },
    states: [{ id: "fetch", type: "http_get", url: io.url }],
  });
  const rows: { workers: number; perSecond: number }[] = [];
  for (let n = 1; n <= 3; n++) {
    await addWorker(["scale", "hop"]);
    io.gate();
    const ids: string[] = [];
    for (let i = 0; i < RUNS_PER_WORKER * n; i++) {
      ids.push((await engine.startRun({ definition: scale, input: {} })).id);
    }
    io.open();
    await untilDone(db, ids);
    const last = db.prepare(
      `SELECT MAX(completed_at) AS t FROM workflow_runs WHERE id IN (${ids.map(() => "?").join(",")})`,
    )
      .get(...ids) as { t: string };
    rows.push({ workers: n, perSecond: ids.length / ((Date.parse(last.t) - io.openedAt) / 1000) });
  }
  console.log(
    `(a) I/O-bound steps (${DELAY_MS} ms each), concurrency ${CONCURRENCY} per worker, ${RUNS_PER_WORKER} runs per worker`,
  );
  console.log("    workers  steps/s  × one worker");
  for (const r of rows) {
    console.log(
      `    ${String(r.workers).padStart(7)}  ${r.perSecond.toFixed(1).padStart(7)}  ${
        (r.perSecond / rows[0].perSecond).toFixed(2).padStart(12)
      }`,
    );
  }

  // (b) the remote hop: the same chain on the station's own workers and on a stn worker.
  const chain = (id: string, queue?: string) =>
    WorkflowDefinition.parse({
      id,
      ...(queue ? { defaults: { queue } } : {}),
      states: Array.from({ length: 20 }, (_, i) => ({
        id: `s${i}`,
        type: "transform",
        expression: "{'n': n + 1}",
        output: { n: "$.n" },
        ...(i < 19 ? { next: `s${i + 1}` } : {}),
      })),
    });
  // Per chain: (last completion − first completion) / 19, so the ledger's millisecond timestamps still
  // resolve sub-millisecond differences.
  const perStep = async (definition: WorkflowDefinition) => {
    const out: number[] = [];
    for (let c = 0; c < CHAINS; c++) {
      const run = await engine.startRun({ definition, input: { n: 0 } });
      await untilDone(db, [run.id]);
      const { first, last } = db.prepare(
        "SELECT MIN(completed_at) AS first, MAX(completed_at) AS last FROM step_attempts WHERE run_id = ?",
      ).get(run.id) as { first: string; last: string };
      out.push((Date.parse(last) - Date.parse(first)) / 19);
    }
    return out;
  };
  const local = await perStep(chain("chain_local"));
  const remote = await perStep(chain("chain_remote", "hop"));
  const [l50, r50] = [pct(local, 0.5), pct(remote, 0.5)];
  console.log(`(b) per step of a 20-step transform chain, median of ${CHAINS} chains`);
  console.log(`    local (the station's own workers): ${l50.toFixed(2)} ms`);
  console.log(`    remote (a stn worker):             ${r50.toFixed(2)} ms`);
  console.log(
    `    remote hop overhead:               +${(r50 - l50).toFixed(2)} ms per step (×${
      (r50 / l50).toFixed(2)
    } local)`,
  );
} finally {
  for (const w of workers) await w.stop().catch(() => {});
  await station.stop();
  await io.close();
  await cluster.stop();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
