/**
 * Concurrency-key admission benchmark, against a real in-process station (managed nats-server, SQLite file):
 * the engine benchmark's 1,000 runs × 3 steps (steps/s) for the same workflow without keys, with keys no run
 * waits for (`{key: "${input.customer}", limit: 1000}` over 5 customers plus `{limit: 1000}`: the cost of
 * evaluating, recording and releasing keys), and with keys most runs wait for (limit 50 per customer: runs
 * are admitted as others end); and the same on every step (`step_keys`: each step takes a per-customer key
 * and a step-wide key no step waits for; `step_waiting`: every step's per-customer key has a limit of 10, so
 * most steps wait). Alternated ROUNDS times on one station, so the machine's load hits all of them; the
 * overhead is the median of each round's own ratio to the plain workflow.
 *
 *   deno run -A scripts/bench/concurrency.ts [runs=1000] [rounds=3] [variants=all, e.g. step_keys,waiting]
 */
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { Engine } from "../../src/workflows/engine/mod.ts";
import { tableRow } from "./table.ts";

const RUNS = Number(Deno.args[0] ?? 1000);
const ROUNDS = Number(Deno.args[1] ?? 3);
/** The variants measured against `plain` (all unless named). */
const ONLY = Deno.args[2]?.split(",");
const CUSTOMERS = 5;

setLogLevel("warn");

const states = [
  { id: "a", type: "transform", expression: "{'n': n + 1}", next: "b" },
  { id: "b", type: "inject", data: { v: "${a.n}" }, next: "c" },
  { id: "c", type: "transform", expression: "{'done': b.v}" },
];
const stepKeys = (limit: number) => ({
  states: states.map((s) => ({ ...s, concurrency: [{ key: "${input.customer}", limit }, { limit: 1000 }] })),
});
const variants = {
  plain: {},
  keys: { concurrency: [{ key: "${input.customer}", limit: 1000 }, { limit: 1000 }] },
  waiting: { concurrency: [{ key: "${input.customer}", limit: 50 }] },
  step_keys: stepKeys(1000),
  step_waiting: stepKeys(10),
};
type Variant = keyof typeof variants;
const measured = (Object.keys(variants) as Variant[]).filter((v) =>
  v === "plain" || !ONLY || ONLY.includes(v)
);

/** Steps per second of RUNS runs × 3 steps of one variant, all started at once. */
async function measure(engine: Engine, variant: Variant, round: number): Promise<number> {
  const definition = WorkflowDefinition.parse({
    id: `bench-${variant}-${round}`,
    states,
    ...variants[variant],
  });
  let ended = 0, failed = 0;
  let allEnded!: () => void;
  const done = new Promise<void>((r) => (allEnded = r));
  const unhook = engine.onRunEnd((id) => {
    if (engine.reads.runs.get(id)!.status !== "completed") failed++;
    if (++ended === RUNS) allEnded();
  });
  const t0 = performance.now();
  await Promise.all(
    Array.from(
      { length: RUNS },
      (_, i) => engine.startRun({ definition, input: { n: i, customer: `c${i % CUSTOMERS}` } }),
    ),
  );
  await done;
  const secs = (performance.now() - t0) / 1000;
  unhook();
  if (failed) throw new Error(`${failed} runs of ${variant} did not complete`);
  return (RUNS * 3) / secs;
}

const home = await Deno.makeTempDir({ prefix: "stn-bench-concurrency-" });
const station = await startStation(loadConfig({ env: { STATION_HOME: home }, flags: { "server.port": 0 } }), {
  announce: false,
});
const rates: Record<Variant, number[]> = {
  plain: [],
  keys: [],
  waiting: [],
  step_keys: [],
  step_waiting: [],
};
try {
  await measure(station.ctx.engine, "plain", -1); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of measured) {
      rates[v].push(await measure(station.ctx.engine, v, r));
    }
  }
} finally {
  await station.stop();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rate = (xs: number[]) =>
  `${med(xs).toFixed(0)} steps/s (rounds: ${xs.map((x) => x.toFixed(0)).join(", ")})`;
for (const v of measured) console.log(`${v}: ${rate(rates[v])}`);
// Each round's variants ran one after the other, so a round's ratio sees the same load: the median of those.
const overhead = (v: Variant) => 1 - med(rates[v].map((x, i) => x / rates.plain[i]));
const figures: Record<Exclude<Variant, "plain">, string> = {
  keys: "keys no run waits for",
  waiting: "limit 50 per customer: most runs wait",
  step_keys: "keys on every step, none waits",
  step_waiting: "keys on every step, limit 10 per customer: most steps wait",
};
for (
  const [v, what] of (Object.entries(figures) as [Variant, string][]).filter(([v]) => measured.includes(v))
) {
  tableRow({
    figure: `concurrency-key admission, ${RUNS} runs × 3 steps (${what})`,
    value: `${med(rates[v]).toFixed(0)} steps/s`,
    baseline: `the same workflow without keys ${med(rates.plain).toFixed(0)} steps/s`,
    ratio: `overhead ${(overhead(v) * 100).toFixed(1)}% (median of the rounds' own ratios)`,
    target: "≤ 15%",
  });
}
