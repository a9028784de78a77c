/**
 * MCP server pooling (issue 36): the example environment's filesystem server from npm (started by npx)
 * under a running `stn serve`, the file auditor (one tool call, then its answer) against the tests'
 * scripted model, which answers at once. Two environments of one station hold the same server, one pooled
 * (the default) and one `per_run: true` (what every run did before pooling) — the baseline of the same run.
 *
 *   (a) warm `stn agent run` through the CLI, alternating pooled / per-run: wall time, and the run's time
 *       in the station beyond the model's (run duration − its turns' model time); `stn agent runs` beside
 *       it is the CLI's own floor;
 *   (b) 20 runs at once over the API, pooled then per-run: time until all ended, and the peak of the
 *       server's processes (instances: children of stn serve; all: npx, sh and node) and their RSS.
 *
 *   deno run -A scripts/bench/mcp_pool.ts [rounds=8] [concurrent=20]
 */
import { cp } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { startModelServer } from "../../tests/helpers/model_server.ts";
import { tableRow } from "./table.ts";

const ROUNDS = Number(Deno.args[0] ?? 8);
const CONCURRENT = Number(Deno.args[1] ?? 20);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../examples/environments/default", import.meta.url));
const ENVS = ["pooled", "perrun"] as const;
type Env = typeof ENVS[number];

const model = startModelServer();
model.route((r) =>
  r.body.messages.some((m: { role: string }) => m.role === "tool")
    ? { text: JSON.stringify({ summary: "Fine.", severity: "low", findings: [] }) }
    : { calls: [{ name: "__list_allowed_directories", args: {} }] }
);

const home = await Deno.makeTempDir({ prefix: "stn-bench-mcp-pool-" });
const roots: Record<Env, string> = { pooled: join(home, "root-pooled"), perrun: join(home, "root-perrun") };
const fsJson = JSON.parse(await Deno.readTextFile(join(EXAMPLE, "fs.json")));
for (const env of ENVS) {
  const dir = join(home, "environments", env);
  await Deno.mkdir(join(dir, "agents"), { recursive: true });
  await Deno.mkdir(roots[env]);
  await Deno.writeTextFile(join(roots[env], "notes.txt"), "nothing secret\n");
  await cp(join(EXAMPLE, "agents", "file-auditor.prompt"), join(dir, "agents", "file-auditor.prompt"));
  await Deno.writeTextFile(join(dir, "variables.yml"), `ROOT: ${roots[env]}\n`);
  const fs = { ...fsJson.mcpServers.fs, ...(env === "perrun" ? { per_run: true } : {}) };
  await Deno.writeTextFile(join(dir, "fs.json"), JSON.stringify({ ...fsJson, mcpServers: { fs } }));
}
await Deno.writeTextFile(
  join(home, "config.yaml"),
  `ai:\n  provider: openai\n  model: openai/bench\n  base_url: ${model.url}\n  api_key: sk-bench\n` +
    `sandbox:\n  enabled: false\nlog:\n  level: warn\nworkflows:\n  sync_on_start: false\n`,
);
const env: Record<string, string> = { ...Deno.env.toObject(), STATION_HOME: home, NO_COLOR: "1" };
for (const k of ["STATION_URL", "STATION_API_TOKEN"]) delete env[k];

const serve = new Deno.Command(Deno.execPath(), {
  args: [...STN_RUN_ARGS, MAIN, "serve", "--port", "0"],
  env,
  clearEnv: true,
  stdout: "null",
  stderr: "inherit",
}).spawn();

/** Runs the CLI to exit; returns its wall time in ms and stdout. */
async function stn(args: string[]): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const o = await new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, MAIN, "--station", url, ...args],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (o.code !== 0) throw new Error(`stn ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
  return { ms, out: new TextDecoder().decode(o.stdout) };
}

/** The server's processes of one environment (found by its root folder): pids, parents, RSS in KiB. */
function serverProcesses(root: string): { pid: number; ppid: number; rssKib: number }[] {
  const out = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      if (!cmd.includes(root) || !cmd.includes("server-filesystem")) continue;
      const status = Deno.readTextFileSync(`/proc/${e.name}/status`);
      const field = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
      out.push({ pid: Number(e.name), ppid: field("PPid"), rssKib: field("VmRSS") });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (n: number) => `${n.toFixed(0)} ms`;
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/** The run's time in the station beyond its model calls. */
async function stationOverhead(runId: string): Promise<number> {
  const run = await (await fetch(`${url}/api/v1/agent-runs/${runId}`)).json();
  const modelMs = (run.history ?? []).reduce((s: number, t: { duration_ms: number }) => s + t.duration_ms, 0);
  return run.duration_ms - modelMs;
}

let url = "";
try {
  for (let i = 0; i < 600 && !url; i++) {
    try {
      url = JSON.parse(Deno.readTextFileSync(join(home, "run", "server.json"))).url;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!url) throw new Error("stn serve did not start");
  for (const e of ENVS) await stn(["sync", e, "--trust"]);

  // (a) warm single runs, alternating; the first of each is a warm-up (npx's cache, the pool's start).
  const wall: Record<Env, number[]> = { pooled: [], perrun: [] };
  const station: Record<Env, number[]> = { pooled: [], perrun: [] };
  const floor: number[] = [];
  for (let i = 0; i <= ROUNDS; i++) {
    for (const e of ENVS) {
      const r = await stn(["--json", "agent", "run", "file-auditor", "Audit", "--env", e]);
      if (i === 0) continue;
      wall[e].push(r.ms);
      station[e].push(await stationOverhead(JSON.parse(r.out).run_id));
    }
    if (i > 0) floor.push((await stn(["agent", "runs", "--limit", "1"])).ms);
  }
  const [pw, rw, ps, rs, f] = [
    median(wall.pooled),
    median(wall.perrun),
    median(station.pooled),
    median(station.perrun),
    median(floor),
  ];
  console.log(
    `warm \`stn agent run file-auditor\` (1 MCP tool call, 2 model turns), ${ROUNDS} alternating runs:`,
  );
  console.log(
    `  wall, pooled:    ${ms(pw)}   per run (baseline): ${ms(rw)}   ratio ×${(pw / rw).toFixed(2)}`,
  );
  console.log(`  station time beyond the model, pooled: ${ms(ps)}   per run: ${ms(rs)}`);
  console.log(`  CLI floor (\`stn agent runs\`): ${ms(f)}; pooled wall beyond it: ${ms(pw - f)}`);
  tableRow({
    figure: "warm `stn agent run` (example env, scripted model): station time beyond the model",
    value: ms(ps),
    baseline: `per_run: true ${ms(rs)}`,
    ratio: `×${(ps / rs).toFixed(2)}`,
    target: "≤ 150 ms",
  });
  tableRow({
    figure: "warm `stn agent run` wall (CLI included; `stn agent runs` floor beside it)",
    value: `${ms(pw)} (floor ${ms(f)})`,
    baseline: `per_run: true ${ms(rw)}`,
    ratio: `×${(pw / rw).toFixed(2)}`,
    target: "wall − floor ≤ 150 ms",
  });

  // (b) CONCURRENT runs at once over the API, pooled then per run.
  const figures: Partial<Record<Env, string>> = {};
  for (const e of ENVS) {
    let peakInstances = 0, peakAll = 0, peakRss = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const ps = serverProcesses(roots[e]);
        peakInstances = Math.max(peakInstances, ps.filter((p) => p.ppid === serve.pid).length);
        peakAll = Math.max(peakAll, ps.length);
        peakRss = Math.max(peakRss, ps.reduce((s, p) => s + p.rssKib, 0));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const t0 = performance.now();
    const runs = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const res = await fetch(`${url}/api/v1/agents/file-auditor/runs?wait=1`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ task: "Audit", environment: e }),
        });
        return await res.json();
      }),
    );
    const took = performance.now() - t0;
    sampling = false;
    await sampler;
    const failed = runs.filter((r) => r.status !== "completed");
    if (failed.length) {
      throw new Error(`${failed.length} runs did not complete: ${JSON.stringify(failed[0])}`);
    }
    console.log(
      `${CONCURRENT} concurrent runs, ${e === "pooled" ? "pooled" : "per_run: true (baseline)"}: ${
        ms(took)
      }; ` +
        `peak server instances ${peakInstances} (processes ${peakAll}), their RSS ${mib(peakRss)}`,
    );
    figures[e] = `${ms(took)}; ${peakInstances} (${peakAll}); ${mib(peakRss)}`;
  }
  tableRow({
    figure: `${CONCURRENT} concurrent agent runs: time; MCP server instances (processes); their RSS`,
    value: figures.pooled!,
    baseline: `per_run: true ${figures.perrun}`,
    ratio: "",
    target: "≤ 2 processes per server, ≤ 300 MiB",
  });
} finally {
  serve.kill("SIGTERM");
  await serve.status;
  await model.close();
  await Deno.remove(home, { recursive: true });
}
