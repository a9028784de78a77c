/**
 * Engine benchmark, against a real in-process station (managed nats-server, SQLite file):
 *   (a) per-step overhead of a 20-step transform chain: gap between consecutive step completions, p50/p99
 *       (each next step is dispatched eagerly, without a JetStream message), and how long the main thread
 *       waited for a CPU meanwhile (the machine's other work, which the p99 follows) — also within each step,
 *       so it prints the p99 of each step's time less that wait (stn's own share, load aside) and the slowest
 *       1% with their step index (1: starting the run);
 *   (b) throughput of 1,000 runs × 3 steps (steps/s);
 *   (c) the floor, in the same run and on the same nats-server: raw JetStream publish → consume → ack,
 *       one message at a time (latency p50/p99) and 3,000 messages through a pull consumer (msgs/s).
 * Prints each measurement and its ratio to the floor, for each `ledger.durability` level (normal, fsync — the
 * default — and step), alternating ROUNDS times (each round a fresh station), with the WAL syncs per step and
 * how many steps started before the commits they follow from were synced (the engine's sync counter). Under
 * `step`, which promises each step's outcome on disk, a completion is stamped when a sync covering it ended
 * (not at commit), and a run of (b) counts as ended once its last commit is synced.
 *
 *   deno run -A scripts/bench/engine.ts [chains=30] [runs=1000] [rounds=2] [modes=normal,fsync,step] [pad=0]
 * (`pad`: each definition also carries a state no run reaches, of about that many bytes — real workflows'
 * definitions are kilobytes, the benchmark's a few hundred bytes.)
 * (under the V8 flags stn ships with: started without --expose-gc, it runs itself again with them.)
 */
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import { tableRow } from "./table.ts";
import type { StatementSync } from "node:sqlite";
import { type Database, openDatabase, transaction } from "../../src/db/database.ts";
import { processDurability, walDurability } from "../../src/db/durability.ts";
import { cpuWaitClock } from "../lib/cpu_wait.ts";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";

// The engine is measured as stn runs it: under the V8 flags it ships with (src/build/stn_flags.ts), whose small
// young generation turns V8's few 5–15 ms scavenges into many of ~0.5 ms — the chain's p99 depends on which.
// Started without them (no `gc`: they include --expose-gc), the benchmark runs itself again with them.
if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
  const args = [...STN_RUN_ARGS, new URL(import.meta.url).pathname, ...Deno.args];
  const { code } = await new Deno.Command(Deno.execPath(), { args, stdin: "inherit" }).spawn().status;
  Deno.exit(code);
}

const CHAINS = Number(Deno.args[0] ?? 30);
const RUNS = Number(Deno.args[1] ?? 1000);
const ROUNDS = Number(Deno.args[2] ?? 2);
type Mode = "normal" | "fsync" | "step";
const MODES = (Deno.args[3] ?? "normal,fsync,step").split(",") as Mode[];
const PADDING = Number(Deno.args[4] ?? 0) > 0
  ? [{ id: "padding", type: "inject", data: { text: "x".repeat(Number(Deno.args[4])) } }]
  : [];

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x: number) => `${x.toFixed(2)} ms`;

/** A count from the station's SQLite file (statements prepared once, as the engine's are). */
const statements = new Map<string, StatementSync>();
function count(db: Database, sql: string, ...params: string[]): number {
  let s = statements.get(sql);
  if (!s) statements.set(sql, s = db.prepare(sql));
  return (s.get(...params) as { n: number }).n;
}

async function untilDone(db: Database, ids: string[]): Promise<void> {
  for (;;) {
    const left = count(
      db,
      `SELECT COUNT(*) AS n FROM workflow_runs WHERE id IN (${ids.map(() => "?").join(",")})
       AND status NOT IN ('completed','failed','canceled')`,
      ...ids,
    );
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const failed = count(
    db,
    `SELECT COUNT(*) AS n FROM workflow_runs WHERE id IN (${
      ids.map(() => "?").join(",")
    }) AND status != 'completed'`,
    ...ids,
  );
  if (failed) throw new Error(`${failed} runs did not complete`);
}

setLogLevel("warn");

interface Figures {
  floorP50: number;
  floorP99: number;
  floorRate: number;
  p50: number;
  p99: number;
  secs: number;
  stepRate: number;
  /** During (a): how long the main thread was runnable but waited for a CPU, and the phase's length (ms). */
  cpuWait: number;
  chainMs: number;
  /** (a)'s p99 of each step's time less the CPU wait within it: what stn itself spent, load aside. */
  ownP99: number;
  /** WAL syncs per step, and the share of steps started before what they follow from was synced: (a), (b). */
  chainSyncs: number;
  chainUnsynced: number;
  manySyncs: number;
  manyUnsynced: number;
}

/** Each round's slowest 1% of (a): "gap (CPU wait within it) @step index" (index 1 includes starting the run). */
const slowest: Record<Mode, string[]> = { normal: [], fsync: [], step: [] };

/** One round against a fresh station whose ledger runs with the given durability. */
async function measure(durability: Mode): Promise<Figures> {
  const home = await Deno.makeTempDir({ prefix: "stn-bench-" });
  const config = loadConfig({
    env: { STATION_HOME: home },
    flags: { "server.port": 0, "ledger.durability": durability },
  });
  const station = await startStation(config, { announce: false });
  const engine = station.ctx.engine;
  const db = station.ctx.db;
  const nc = station.ctx.nats.nc;
  // When a step's outcome counts as done: at commit, or under `step` once a sync covering it ended.
  const settled = durability === "step" ? station.ctx.durable : () => Promise.resolve();
  const counters = () => ({
    syncs: engine.syncs,
    started: engine.stats.started,
    unsynced: engine.stats.unsynced,
  });
  const since = (c: ReturnType<typeof counters>) => {
    const now = counters(), steps = now.started - c.started;
    return { syncs: (now.syncs - c.syncs) / steps, unsynced: (now.unsynced - c.unsynced) / steps };
  };
  statements.clear();
  try {
    // (c) floor first: raw JetStream on the same server.
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: "BENCH",
      subjects: ["bench.>"],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
    });
    await jsm.consumers.add("BENCH", { durable_name: "bench", ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    const consumer = await js.consumers.get("BENCH", "bench");
    const floorLat: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await js.publish("bench.one", "{}");
      const m = await consumer.next({ expires: 5000 });
      await m!.ackAck();
      floorLat.push(performance.now() - t0);
    }
    const total = RUNS * 3;
    const t0 = performance.now();
    const messages = await consumer.consume({ max_messages: 100 });
    const consumed = (async () => {
      let n = 0;
      for await (const m of messages) {
        m.ack();
        if (++n === total) break;
      }
    })();
    await Promise.all(Array.from({ length: total }, () => js.publish("bench.many", "{}")));
    await consumed;
    const floorRate = total / ((performance.now() - t0) / 1000);
    await messages.close();

    // (a) 20-step chain, one run at a time.
    const clock = cpuWaitClock();
    const wait0 = clock.read(), chain0 = performance.now(), chainCounts = counters();
    const chain = WorkflowDefinition.parse({
      id: "chain20",
      states: [
        ...Array.from({ length: 20 }, (_, i) => ({
          id: `s${i}`,
          type: "transform",
          expression: "{'n': n + 1}",
          output: { n: "$.n" },
          ...(i < 19 ? { next: `s${i + 1}` } : {}),
        })),
        ...PADDING,
      ],
    });
    // Completion instants come from the engine's own notifications (sub-ms clock), not the ledger's ms timestamps.
    const gaps: number[] = [];
    const steps: { gap: number; wait: number; index: number }[] = [];
    for (let c = 0; c < CHAINS; c++) {
      const stamps: number[] = [], waits: number[] = [clock.read()];
      let seen = 0;
      const t = performance.now();
      const run = await engine.startRun({ definition: chain, input: { n: 0 } });
      const unwatch = engine.watch(run.id, () => {
        const n = count(
          db,
          "SELECT COUNT(*) AS n FROM step_attempts WHERE run_id = ? AND status = 'completed'",
          run.id,
        );
        if (n > seen) {
          seen = n, settled().then(() => (stamps.push(performance.now()), waits.push(clock.read())));
        }
      });
      await untilDone(db, [run.id]);
      await settled();
      unwatch();
      [t, ...stamps].forEach((x, i, all) => {
        if (i === 0) return;
        gaps.push(x - all[i - 1]);
        steps.push({ gap: x - all[i - 1], wait: waits[i] - waits[i - 1], index: i });
      });
    }

    const cpuWait = clock.read() - wait0, chainMs = performance.now() - chain0;
    clock.close();
    slowest[durability].push(
      [...steps].sort((a, b) => b.gap - a.gap).slice(0, Math.ceil(steps.length / 100) + 1)
        .map((s) => `${s.gap.toFixed(1)} (${s.wait.toFixed(1)}) @${s.index}`).join(", "),
    );
    const chainCounted = since(chainCounts);
    const manyCounts = counters();
    // (b) 1,000 runs × 3 steps, all at once.
    const three = WorkflowDefinition.parse({
      id: "three",
      states: [
        { id: "a", type: "transform", expression: "{'n': n + 1}", next: "b" },
        { id: "b", type: "inject", data: { v: "${a.n}" }, next: "c" },
        { id: "c", type: "transform", expression: "{'done': b.v}" },
        ...PADDING,
      ],
    });
    // Run ends are counted by the engine's run-end hook: polling the ledger for 1,000 runs took ~10% of the
    // main thread away from the engine it measures. Their statuses are checked once, after.
    let ended = 0;
    let allEnded!: () => void;
    const done = new Promise<void>((r) => (allEnded = r));
    const unhook = engine.onRunEnd(() => void settled().then(() => ++ended === RUNS && allEnded()));
    const t1 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => engine.startRun({ definition: three, input: { n: i } })),
    )
      .then((rs) => rs.map((r) => r.id));
    await done;
    const secs = (performance.now() - t1) / 1000;
    unhook();
    await untilDone(db, ids);
    const stepRate = (RUNS * 3) / secs;
    const manyCounted = since(manyCounts);

    return {
      floorP50: pct(floorLat, 0.5),
      floorP99: pct(floorLat, 0.99),
      floorRate,
      p50: pct(gaps, 0.5),
      p99: pct(gaps, 0.99),
      secs,
      stepRate,
      cpuWait,
      chainMs,
      ownP99: pct(steps.map((s) => s.gap - s.wait), 0.99),
      chainSyncs: chainCounted.syncs,
      chainUnsynced: chainCounted.unsynced,
      manySyncs: manyCounted.syncs,
      manyUnsynced: manyCounted.unsynced,
    };
  } finally {
    await station.stop();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

// The two ledger modes alternate, each round on its own fresh station, so the machine's load hits both.
const rounds: Record<Mode, Figures[]> = { normal: [], fsync: [], step: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of MODES) rounds[mode].push(await measure(mode));
}
/**
 * The disk's floor for each mode: one small SQLite commit at a time on a ledger file in the same
 * directory, as the engine commits, and in the `fsync` mode the WAL sync it waits for before acknowledging.
 */
async function commitFloor(durability: "normal" | "fsync"): Promise<number> {
  const home = await Deno.makeTempDir({ prefix: "stn-bench-commit-" });
  const db = openDatabase(`${home}/station.db`);
  const sync = durability === "fsync" ? walDurability(db, `${home}/station.db`) : processDurability;
  try {
    db.exec("CREATE TABLE bench_commits (id INTEGER PRIMARY KEY, v TEXT)");
    const insert = db.prepare("INSERT INTO bench_commits (v) VALUES (?)");
    const lat: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      transaction(db, () => insert.run("x".repeat(200)));
      await sync.durable();
      lat.push(performance.now() - t0);
    }
    return pct(lat, 0.5);
  } finally {
    sync.close();
    db.close();
    await Deno.remove(home, { recursive: true });
  }
}
const commits = { normal: await commitFloor("normal"), fsync: await commitFloor("fsync") };
console.log(
  `SQLite commit, one at a time (p50): normal ${
    ms(commits.normal)
  }; fsync (commit, then the WAL sync it waits for) ` +
    ms(commits.fsync),
);
const range = (xs: number[], f: (x: number) => string) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[0] === s.at(-1) ? f(s[0]) : `${f(s[0])}–${f(s.at(-1)!)}`;
};
const rate = (x: number) => x.toFixed(0);
const two = (x: number) => x.toFixed(2);
const share = (x: number) => `${(x * 100).toFixed(0)}%`;
for (const mode of MODES) {
  const fs = rounds[mode];
  const of = (k: keyof Figures) => fs.map((f) => f[k]);
  console.log(`ledger.durability: ${mode} (${ROUNDS} rounds; ranges over rounds)`);
  console.log(`  floor (raw JetStream publish→consume→ack, same nats-server)`);
  console.log(
    `    one message at a time: p50 ${range(of("floorP50"), ms)}  p99 ${range(of("floorP99"), ms)}`,
  );
  console.log(`    ${RUNS * 3} messages, pull consumer: ${range(of("floorRate"), rate)} msgs/s`);
  console.log(
    `  (a) 20-step transform chain × ${CHAINS}: per-step p50 ${range(of("p50"), ms)}  p99 ${
      range(of("p99"), ms)
    }` + (mode === "step" ? " (each step done when a sync covering its outcome ended)" : " (done at commit)"),
  );
  console.log(
    `      WAL syncs per step ${range(of("chainSyncs"), two)}; steps started before what they follow from ` +
      `was synced: ${range(of("chainUnsynced"), share)}`,
  );
  console.log(
    `      ratio to the floor: p50 ×${range(fs.map((f) => f.p50 / f.floorP50), (x) => x.toFixed(1))}  p99 ×${
      range(fs.map((f) => f.p99 / f.floorP99), (x) => x.toFixed(1))
    }`,
  );
  console.log(
    `      each round's p99 and how long the main thread was runnable but waited for a CPU during (a): ${
      fs.map((f) => `${ms(f.p99)} (${f.cpuWait.toFixed(0)} of ${f.chainMs.toFixed(0)} ms)`).join(", ")
    }`,
  );
  console.log(
    `      p99 of each step less the CPU wait within it: ${
      range(of("ownP99"), ms)
    }; each round's slowest 1% in ms, "gap (CPU wait) @step": ${slowest[mode].join(" | ")}`,
  );
  console.log(`  (b) ${RUNS} runs × 3 steps: ${range(of("stepRate"), rate)} steps/s`);
  console.log(
    `      WAL syncs per step ${range(of("manySyncs"), two)}; steps started unsynced: ${
      range(of("manyUnsynced"), share)
    }`,
  );
  console.log(
    `      steps/s as a fraction of the floor's msgs/s: ×${
      range(fs.map((f) => f.stepRate / f.floorRate), (x) => x.toFixed(2))
    }`,
  );
}
// One mode alone (a profile of it) prints its figures only.
if (MODES.length < 2) Deno.exit(0);
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = (mode: Mode, k: keyof Figures) => med(rounds[mode].map((f) => f[k]));
const ofMode = (mode: Mode, k: keyof Figures) => rounds[mode].map((f) => f[k]);
/** `mode` against `base` (medians over rounds): per-step p50 and p99, and steps/s. */
const versus = (mode: Mode, base: Mode) => ({
  p50: m(mode, "p50") / m(base, "p50"),
  p99: m(mode, "p99") / m(base, "p99"),
  rate: m(base, "stepRate") / m(mode, "stepRate"),
});
const has = (mode: Mode) => rounds[mode].length > 0;
if (has("fsync") && has("normal")) {
  const v = versus("fsync", "normal");
  console.log(
    `fsync vs normal (medians): per-step p50 ×${two(v.p50)}, p99 ×${two(v.p99)}, steps/s ×${
      two(1 / v.rate)
    } (target: within 1.3×)`,
  );
}
if (has("step") && has("fsync")) {
  const v = versus("step", "fsync");
  const meets = v.p50 <= 1.5 && v.rate <= 1.2;
  console.log(
    `step vs fsync (medians): per-step p50 ×${two(v.p50)} (default if ≤ 1.5×), p99 ×${two(v.p99)}, ` +
      `throughput fsync/step ×${two(v.rate)} (default if ≤ 1.2×): ${meets ? "meets" : "misses"} the bar`,
  );
}
if (has("normal")) {
  const normal = rounds.normal;
  tableRow({
    figure: `engine throughput, ${RUNS} runs × 3 steps (\`normal\`)`,
    value: `${range(ofMode("normal", "stepRate"), rate)} steps/s`,
    baseline: `raw JetStream ${range(ofMode("normal", "floorRate"), rate)} msgs/s`,
    ratio: `×${range(normal.map((f) => f.stepRate / f.floorRate), (x) => x.toFixed(2))}`,
    target: "≥ 3,000 steps/s and ≥ 0.2×",
  });
  tableRow({
    figure: "engine per-step p50 / p99 (20-step chain, `normal`)",
    value: `${range(ofMode("normal", "p50"), ms)} / ${range(ofMode("normal", "p99"), ms)}`,
    baseline: `raw JetStream round trip ${range(ofMode("normal", "floorP50"), ms)} / ${
      range(ofMode("normal", "floorP99"), ms)
    }`,
    ratio: `×${range(normal.map((f) => f.p50 / f.floorP50), (x) => x.toFixed(1))} / ×${
      range(normal.map((f) => f.p99 / f.floorP99), (x) => x.toFixed(1))
    }`,
    target: "≤ 0.7 / ≤ 3 ms",
  });
}
for (const mode of (["fsync", "step"] as const).filter((x) => has(x) && has("normal"))) {
  const v = versus(mode, "normal");
  tableRow({
    figure: `the same with \`ledger.durability: ${mode}\`: steps/s; per-step p50 / p99; syncs per chain step`,
    value: `${range(ofMode(mode, "stepRate"), rate)} steps/s; ${range(ofMode(mode, "p50"), ms)} / ${
      range(ofMode(mode, "p99"), ms)
    }; ${range(ofMode(mode, "chainSyncs"), two)}`,
    baseline: `the \`normal\` mode above; one commit ${ms(commits.normal)}, ${
      ms(commits.fsync)
    } with its WAL sync`,
    ratio: `steps/s ×${two(1 / v.rate)}; p50 ×${two(v.p50)}; p99 ×${two(v.p99)}`,
    target: mode === "fsync" ? "within 1.3× of `normal`" : "p50 ≤ 1.5×, throughput ≤ 1.2× of `fsync`",
  });
}
