/**
 * Model-call burst under `ai.limits` (issue 33's acceptance; docs/benchmarks.md#model-rate-limits): a real
 * `stn serve` (and, with workers, `stn worker` processes on its NATS server) fires RUNS agent runs at once
 * against a scripted provider that answers 429 with Retry-After above RPM requests a minute per API key;
 * stn's `ai.limits` sets the same RPM for the provider (`openai`), which every run here calls with one key.
 * Prints the failures, the most requests the provider served in any 60 s, the 429s, and the total time
 * against the limit's arithmetic (RUNS / RPM minutes).
 *
 *   deno run -A scripts/bench/model_burst.ts [runs=300] [rpm=60] [workers=0]
 *
 * With workers (e.g. 2), each run is a one-step workflow whose agent step a worker runs (the station runs no
 * steps), and the workers ask the station for each model call's permit; without, they are agent runs of the
 * station's API.
 */
import { StationClient } from "../../src/client/http.ts";
import { listAgentRuns, startAgentRun } from "../../src/client/agent_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { startRun } from "../../src/client/workflow_runs.ts";
import { singleNats, startWorkerProcess, type WorkerProcess } from "../../tests/helpers/cluster.ts";
import { tempHome } from "../../tests/helpers/home.ts";
import { maxPerMinute, startLimitedModel } from "../../tests/helpers/limited_model.ts";
import { startServe, waitFor } from "../../tests/helpers/stn.ts";
import { tableRow } from "./table.ts";

const RUNS = Number(Deno.args[0] ?? 300);
const RPM = Number(Deno.args[1] ?? 60);
const WORKERS = Number(Deno.args[2] ?? 0);
const ENDED = new Set(["completed", "failed", "canceled"]);

const model = startLimitedModel({ requestsPerMinute: RPM, holdMs: 200 });
const home = await tempHome();
// The runs wait their turn for up to RUNS / RPM minutes: the deadline leaves room for it.
const timeout = `${Math.ceil((RUNS / RPM) * 2) + 5}m`;
home.writeConfig(
  `ai:\n  provider: openai\n  base_url: ${model.server.url}\n  api_key: sk-bench\n` +
    `  limits:\n    openai: {requests_per_minute: ${RPM}}\nlog:\n  level: warn\n`,
);
Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
Deno.writeTextFileSync(
  home.path("environments", "default", "agents", "Plain.prompt"),
  `---\nmodel: openai/bench\ntimeout: ${timeout}\n---\n{{userInput}}\n`,
);
const nats = await singleNats();
const serve = await startServe({
  env: home.env,
  home: home.home,
  args: ["--port", "0", "--nats-url", nats.url, ...(WORKERS > 0 ? ["--no-local-workers"] : [])],
});
const workers: WorkerProcess[] = Array.from(
  { length: WORKERS },
  (_, i) => startWorkerProcess({ env: home.env, natsUrl: nats.url, name: `w-${i + 1}` }),
);
const client = new StationClient(serve.url);
try {
  if (!await waitFor(async () => (await listWorkers(client)).workers.length === WORKERS, 30_000)) {
    throw new Error(`workers did not register:\n${workers.map((w) => w.stderr()).join("\n")}`);
  }
  const t0 = Date.now();
  await Promise.all(Array.from({ length: RUNS }, (_, i) =>
    WORKERS > 0
      ? startRun(client, {
        definition: { id: "burst", states: [{ id: "ask", type: "agent", agent: "Plain", task: `q${i}` }] },
        input: {},
      })
      : startAgentRun(client, "Plain", { task: `q${i}` })));
  const fired = (Date.now() - t0) / 1000;
  let runs = (await listAgentRuns(client, { limit: 500 })).runs;
  while (runs.length < RUNS || runs.some((r) => !ENDED.has(r.status))) {
    await new Promise((r) => setTimeout(r, 2000));
    runs = (await listAgentRuns(client, { limit: 500 })).runs;
  }
  const secs = (Math.max(...model.served.map((s) => s.at)) - t0) / 1000;
  const arithmetic = (RUNS / RPM) * 60;
  const failed = runs.filter((r) => r.status !== "completed").length;
  const perMinute = maxPerMinute(model.served, "requests");
  console.log(
    `model burst: ${RUNS} agent runs, ai.limits openai requests_per_minute ${RPM} (one API key), ` +
      `${WORKERS > 0 ? `${WORKERS} workers` : "the station alone"}`,
  );
  console.log(`  fired in ${fired.toFixed(1)} s`);
  console.log(`  failures: ${failed}`);
  console.log(`  provider: ${model.served.length} requests served, ${model.refused()} answered 429`);
  console.log(`  most requests in any 60 s: ${perMinute} (limit ${RPM})`);
  console.log(
    `  total ${secs.toFixed(1)} s (fire to last model call) vs the limit's arithmetic ${RUNS}/${RPM} min = ` +
      `${arithmetic.toFixed(0)} s: ×${(secs / arithmetic).toFixed(3)}`,
  );
  tableRow({
    figure: `model burst: ${RUNS} agent runs at ${RPM}/min (${WORKERS} workers): total time`,
    value: `${secs.toFixed(1)} s (${failed} failed, ≤ ${perMinute}/min, ${model.refused()} × 429)`,
    baseline: `${arithmetic.toFixed(0)} s (the limit's arithmetic)`,
    ratio: `×${(secs / arithmetic).toFixed(2)}`,
    target: "×0.8–1.2, 0 failed, ≤ the rate",
  });
  const ok = failed === 0 && perMinute <= RPM && Math.abs(secs / arithmetic - 1) <= 0.2;
  console.log(`  ${ok ? "PASS" : "FAIL"}: 0 failures, ≤ ${RPM} a minute, within 20% of the arithmetic`);
  if (!ok) Deno.exitCode = 1;
} finally {
  for (const w of workers) await w.stop();
  await serve.stop();
  await nats.stop();
  await model.close();
  await home.cleanup();
}
