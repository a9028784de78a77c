/**
 * Events benchmark, against a real in-process station (managed nats-server, SQLite file, HTTP API):
 * with `waiting` runs parked on `await order.paid` (each matching its own order id), the latency from
 * `POST /api/v1/events` to the matching run's waiting step completing and to the run completing,
 * p50/p99 over `samples` events; the baseline, in the same run and among the same waiting runs, is
 * `POST /api/v1/workflow-runs/:id/signal` to one run's waiting step. Prints each and its ratio to the
 * baseline.
 *
 *   deno run -A scripts/bench/events.ts [waiting=1000] [samples=100]
 */
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { Engine } from "../../src/workflows/engine/engine.ts";

const WAITING = Number(Deno.args[0] ?? 1000);
const SAMPLES = Number(Deno.args[1] ?? 100);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x: number) => `${x.toFixed(2)} ms`;

const orders = WorkflowDefinition.parse({
  id: "orders",
  states: [
    { id: "paid", type: "await", event: "order.paid", match: "event.data.order_id = order.id", next: "ship" },
    { id: "ship", type: "transform", expression: "{'shipped': order.id}" },
  ],
});
const signalled = WorkflowDefinition.parse({
  id: "signalled",
  states: [
    { id: "paid", type: "await", event: "order.confirmed", next: "ship" },
    { id: "ship", type: "transform", expression: "{'shipped': true}" },
  ],
});

/** Resolves when the run's first attempt (the await) has completed, and when the run has. */
function watchRun(engine: Engine, runId: string, t0: () => number) {
  let stepAt = 0;
  let resolve!: (v: { step: number; run: number }) => void;
  const done = new Promise<{ step: number; run: number }>((r) => (resolve = r));
  const check = () => {
    if (!stepAt && engine.reads.attempts.list(runId)[0]?.status === "completed") stepAt = performance.now();
    if (engine.reads.runs.get(runId)!.status === "completed") {
      unwatch();
      resolve({ step: stepAt - t0(), run: performance.now() - t0() });
    }
  };
  const unwatch = engine.watch(runId, check);
  return done;
}

function waitingCount(engine: Engine, ids: string[]): number {
  return ids.filter((id) => engine.reads.runs.get(id)!.status === "waiting").length;
}

setLogLevel("warn");
const home = await Deno.makeTempDir({ prefix: "stn-bench-" });
const config = loadConfig({ env: { STATION_HOME: home }, flags: { "server.port": 0 } });
const station = await startStation(config, { announce: false });
const engine = station.ctx.engine;
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${station.url}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  await res.body?.cancel();
};
try {
  const t = performance.now();
  const orderRuns: string[] = [];
  const signalRuns: string[] = [];
  for (let i = 0; i < WAITING; i++) {
    orderRuns.push((await engine.startRun({ definition: orders, input: { order: { id: i } } })).id);
  }
  for (let i = 0; i < SAMPLES; i++) {
    signalRuns.push((await engine.startRun({ definition: signalled, input: {} })).id);
  }
  const all = [...orderRuns, ...signalRuns];
  while (waitingCount(engine, all) < all.length) await new Promise((r) => setTimeout(r, 50));
  console.log(`${all.length} runs waiting after ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const event = { step: [] as number[], run: [] as number[] };
  const signal = { step: [] as number[], run: [] as number[] };
  // Interleaved, so both see the same load; the order ids are spread over the waiting set.
  for (let i = 0; i < SAMPLES; i++) {
    const order = Math.floor((i * WAITING) / SAMPLES);
    let t0 = 0;
    const e = watchRun(engine, orderRuns[order], () => t0);
    t0 = performance.now();
    await post("/api/v1/events", { name: "order.paid", data: { order_id: order } });
    const er = await e;
    event.step.push(er.step), event.run.push(er.run);

    let t1 = 0;
    const s = watchRun(engine, signalRuns[i], () => t1);
    t1 = performance.now();
    await post(`/api/v1/workflow-runs/${signalRuns[i]}/signal`, { name: "order.confirmed", payload: { i } });
    const sr = await s;
    signal.step.push(sr.step), signal.run.push(sr.run);
  }
  const row = (what: string, xs: number[], base: number[]) =>
    console.log(
      `${what.padEnd(44)} p50 ${ms(pct(xs, 0.5)).padStart(10)}  p99 ${ms(pct(xs, 0.99)).padStart(10)}  ` +
        `×${(pct(xs, 0.5) / pct(base, 0.5)).toFixed(1)} of the signal (p50)`,
    );
  console.log(
    `${SAMPLES} samples each, ${WAITING} runs waiting on order.paid (each matching its own order):`,
  );
  row("signal to one run → waiting step completed", signal.step, signal.step);
  row("event to everyone → waiting step completed", event.step, signal.step);
  row("signal to one run → run completed", signal.run, signal.run);
  row("event to everyone → run completed", event.run, signal.run);
} finally {
  await station.stop();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
