import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";
import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
setLogLevel("warn");
const mode = (Deno.args[0] ?? "normal") as "normal" | "fsync";
const home = await Deno.makeTempDir();
const config = loadConfig({
  env: { STATION_HOME: home },
  flags: { "server.port": 0, "ledger.durability": mode },
});
const station = await startStation(config, { announce: false });
const engine = station.ctx.engine;
const chain = WorkflowDefinition.parse({
  id: "chain20",
  states: Array.from({ length: 20 }, (_, i) => ({
    id: `s${i}`,
    type: "transform",
    expression: "{'n': n + 1}",
    output: { n: "$.n" },
    ...(i < 19 ? { next: `s${i + 1}` } : {}),
  })),
});
const gaps: [number, number][] = [];
for (let c = 0; c < Number(Deno.args[1] ?? 60); c++) {
  let last = performance.now();
  const run = await engine.startRun({ definition: chain, input: { n: 0 } });
  let n = 0;
  await new Promise<void>((resolve) => {
    const un = engine.watch(run.id, () => {
      const rows = engine.reads.attempts.list(run.id).filter((a) => a.status === "completed").length;
      if (rows > n) {
        n = rows;
        const now = performance.now();
        gaps.push([now - last, now]);
        last = now;
      }
      if (rows === 20) {
        un();
        resolve();
      }
    });
  });
}
const sorted = gaps.map((g) => g[0]).sort((a, b) => a - b);
console.log(
  "p50",
  sorted[Math.floor(sorted.length / 2)].toFixed(2),
  "p99",
  sorted[Math.floor(sorted.length * 0.99)].toFixed(2),
);
for (const [g, at] of gaps) {
  if (g > 1.5) console.log(`slow gap ${g.toFixed(2)} ms ending at ${at.toFixed(1)}`);
}
await station.stop();
await Deno.remove(home, { recursive: true });
