/**
 * Skipped-time benchmark, against a real in-process station started with `time: "virtual"` (managed
 * nats-server, SQLite file): the wall time of a run that waits 24 h on a timer and then 72 h for an approval
 * that times out (its onTimeout branch), awaited through `station.time.during` — the acceptance case of
 * issue 28's skipped time; the baseline, in the same run and station, is a run of the same four steps with
 * no time to wait (a 0 s timer, an approval decided as soon as it waits). Median and max over `runs`.
 *
 *   deno run -A scripts/bench/virtual_time.ts [runs=10]
 */
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import { tempHome } from "../../tests/helpers/home.ts";
import { tableRow } from "./table.ts";

const RUNS = Number(Deno.args[0] ?? 10);

const flow = (wait: string) =>
  WorkflowDefinition.parse({
    id: `wait-${wait}`,
    states: [
      { id: "wait", type: "timer", duration: wait, next: "ask" },
      {
        id: "ask",
        type: "human_approval",
        message: "ship it?",
        timeout: "72h",
        onTimeout: "late",
        next: "yes",
      },
      { id: "yes", type: "inject", data: { approved: true } },
      { id: "late", type: "inject", data: { late: true } },
    ],
  });

setLogLevel("warn");
const home = await tempHome();
const config = loadConfig({ env: home.env, flags: { "server.port": 0, "sandbox.enabled": false } });
const station = await startStation(config, { announce: false, time: "virtual" });
const { engine } = station.ctx;
const time = station.time!;

/** Wall ms of one run to its end; `decide` approves its approval as soon as it waits. */
async function once(wait: string, decide: boolean): Promise<number> {
  const t0 = performance.now();
  const run = await engine.startRun({ definition: flow(wait), input: {} });
  let resolve!: () => void;
  const ended = new Promise<void>((r) => (resolve = r));
  const unwatch = engine.watch(run.id, () => {
    if (["completed", "failed", "canceled"].includes(engine.reads.runs.get(run.id)!.status)) resolve();
  });
  await time.during(ended, {
    beforeSkip: async () => {
      const [pending] = engine.reads.approvals.list({ runId: run.id, status: "pending" });
      if (!decide || !pending) return false;
      await engine.decide(pending.id, true, "bench");
      return true;
    },
  });
  unwatch();
  const done = engine.reads.runs.get(run.id)!;
  const want = decide ? { approved: true } : { late: true };
  if (JSON.stringify(JSON.parse(done.result!)) !== JSON.stringify(want)) {
    throw new Error(`run ${run.id}: ${done.result}`);
  }
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  const skipped: number[] = [];
  const plain: number[] = [];
  await once("24h", false); // warm up
  for (let i = 0; i < RUNS; i++) {
    skipped.push(await once("24h", false));
    plain.push(await once("0s", true));
  }
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  console.log(
    `24 h timer + 72 h approval timeout: median ${ms(median(skipped))}, max ${ms(Math.max(...skipped))}`,
  );
  console.log(
    `the same steps with nothing to wait: median ${ms(median(plain))}, max ${ms(Math.max(...plain))}`,
  );
  console.log(`virtual time skipped: ${(time.clock.skipped / 3_600_000).toFixed(0)} h`);
  tableRow({
    figure: "a 24 h timer then a 72 h approval timeout under `time: virtual` (wall time, median)",
    value: ms(median(skipped)),
    baseline: `same steps, nothing to wait ${ms(median(plain))}`,
    ratio: `×${(median(skipped) / median(plain)).toFixed(1)}`,
    target: "< 1 s",
  });
} finally {
  await station.stop();
  await home.cleanup();
}
