/**
 * How fast stn starts, through scripts/stn (the launcher users run), each figure against baselines
 * measured alternating with it in the same run (min, median and max of RUNS each):
 * - client commands: `stn workflow runs` and `stn files list` against a running `stn serve`, vs curl
 *   fetching the same page and vs a bare Deno process doing that fetch (the floor of any Deno CLI), in a
 *   home set up by `stn init --yes`; and `stn workflow runs` in a home whose config.yaml sets the log level
 *   (quoted, with a comment, as a hand-edited file might), which a client command then reads
 *   (src/config/client_settings.ts);
 * - `stn --version` vs a bare `deno eval`;
 * - the embedded one-shot, the README's main job (`workflow run examples/workflows/triage.workflow.yaml`,
 *   what cron and CI call, in its own STATION_HOME with no server), vs `deno eval`, with the peak RSS.
 * Every process runs under GNU time, which also gives its CPU time (user + system, children included):
 * on a machine other work keeps busy the wall time is mostly waiting for a CPU, the CPU time is not.
 * The peak RSS is the largest single process's (stn's own; its nats-server is smaller).
 *
 *   deno run -A scripts/bench/client.ts [runs=15] [client|oneshot] [--against DIR]
 *
 * A second argument runs one half only; `--against DIR` adds the client commands and the one-shot of another
 * checkout of stn (e.g. a `git archive` of the code before a change) to the same alternating rounds, for a
 * before/after in one run.
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tableRow } from "./table.ts";

const against = Deno.args.indexOf("--against");
const AGAINST = against >= 0 ? Deno.args[against + 1] : undefined;
const [runsArg, part] = Deno.args.filter((_, i) => against < 0 || (i !== against && i !== against + 1));
const RUNS = Number(runsArg ?? 15);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const STN = fileURLToPath(new URL("../stn", import.meta.url));
const TRIAGE = fileURLToPath(new URL("../../examples/workflows/triage.workflow.yaml", import.meta.url));

interface Sample {
  ms: number;
  cpuMs: number;
  rssMib: number;
}

/** One process run to exit under GNU time: wall and CPU time, peak RSS. It must succeed. */
async function measure(args: string[], env: Record<string, string>): Promise<Sample> {
  const t0 = performance.now();
  const o = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "@@time %U %S %M", ...args],
    env,
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(o.stderr);
  if (o.code !== 0) throw new Error(`${args.join(" ")}: ${err}`);
  const [user, sys, rss] = /@@time (\S+) (\S+) (\d+)/.exec(err)!.slice(1).map(Number);
  return { ms, cpuMs: (user + sys) * 1000, rssMib: rss / 1024 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median wall time, median CPU time and the wall spread of a series of runs. */
function summary(samples: Sample[]) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(0)} ms`;
  return {
    med: median(ms),
    cpu: median(samples.map((s) => s.cpuMs)),
    peak: Math.max(...samples.map((s) => s.rssMib)),
    text: `wall min ${f(ms[0])}, median ${f(median(ms))}, max ${f(ms.at(-1)!)}; CPU median ${
      f(median(samples.map((s) => s.cpuMs)))
    }`,
  };
}

function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = { ...Deno.env.toObject(), STATION_HOME: home, NO_COLOR: "1" };
  for (const k of ["STATION_URL", "STATION_API_TOKEN"]) delete env[k];
  env.STN_LOG_LEVEL = "warn";
  return env;
}

async function serverUrl(home: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    try {
      return JSON.parse(Deno.readTextFileSync(join(home, "run", "server.json"))).url;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error("stn serve did not start");
}

/** Client commands and `--version` against a running `stn serve`, with their baselines. */
async function clientCommands(): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "stn-bench-client-" });
  const env = baseEnv(home);
  // The config.yaml `stn init --yes` writes: a client command need not read it (src/config/client_settings.ts).
  await new Deno.Command(STN, { args: ["init", "--yes"], env, clearEnv: true, stdout: "null" }).output();
  // A home whose config.yaml sets the log level, as a hand-edited file might: a client command reads it.
  const logHome = await Deno.makeTempDir({ prefix: "stn-bench-client-log-" });
  Deno.writeTextFileSync(join(logHome, "config.yaml"), "log:\n  level: 'warn' # quieter\n");
  const logEnv = baseEnv(logHome);
  const serve = new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, MAIN, "serve", "--port", "0"],
    env,
    clearEnv: true,
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    const url = await serverUrl(home);
    const page = `${url}/api/v1/workflow-runs`;
    const fetchCode = `const r = await fetch("${page}"); console.log(await r.text());`;
    const commands: Record<string, string[]> = {
      curl: ["curl", "-sf", page],
      deno: [Deno.execPath(), "eval", fetchCode],
      runs: [STN, "--station", url, "workflow", "runs"],
      files: [STN, "--station", url, "files", "list"],
      runsLog: [STN, "--station", url, "workflow", "runs"],
      eval: [Deno.execPath(), "eval", "0"],
      version: [STN, "--version"],
      // The other checkout's client commands against the same server, in the same rounds.
      ...(AGAINST
        ? {
          runsAgainst: [join(AGAINST, "scripts", "stn"), "--station", url, "workflow", "runs"],
          filesAgainst: [join(AGAINST, "scripts", "stn"), "--station", url, "files", "list"],
          runsLogAgainst: [join(AGAINST, "scripts", "stn"), "--station", url, "workflow", "runs"],
        }
        : {}),
    };
    const runs: Record<string, Sample[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
    // One untimed round: the launcher's first start runs scripts/setup and keeps what it found.
    const envOf = (key: string) => key.startsWith("runsLog") ? logEnv : env;
    for (const [key, args] of Object.entries(commands)) await measure(args, envOf(key));
    for (let i = 0; i < RUNS; i++) {
      for (const [key, args] of Object.entries(commands)) runs[key].push(await measure(args, envOf(key)));
    }
    const s = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, summary(v)]));
    const cell = (k: string) => `${s[k].med.toFixed(0)} ms (CPU ${s[k].cpu.toFixed(0)} ms)`;
    for (const [cmd, key] of [["workflow runs", "runs"], ["files list", "files"]] as const) {
      tableRow({
        figure: `client command against a running server (\`stn ${cmd}\` via scripts/stn), median`,
        value: cell(key),
        baseline: `curl ${cell("curl")}; bare Deno fetch ${cell("deno")}`,
        ratio: `×${(s[key].med / s.curl.med).toFixed(1)} curl; ×${(s[key].med / s.deno.med).toFixed(1)} Deno`,
        target: "≤ 80 ms",
      });
    }
    tableRow({
      figure: "the same, `stn workflow runs` where config.yaml sets `log.level`",
      value: cell("runsLog"),
      baseline: `curl ${cell("curl")}; bare Deno fetch ${cell("deno")}`,
      ratio: `×${(s.runsLog.med / s.curl.med).toFixed(1)} curl; ×${
        (s.runsLog.med / s.deno.med).toFixed(1)
      } Deno`,
      target: "≤ 80 ms",
    });
    tableRow({
      figure: "`stn --version` via scripts/stn, median",
      value: cell("version"),
      baseline: `deno eval ${cell("eval")}`,
      ratio: `×${(s.version.med / s.eval.med).toFixed(1)}`,
      target: "≤ 50 ms",
    });
    console.log(`client commands through scripts/stn, ${RUNS} alternating runs each:`);
    console.log(`  stn workflow runs: ${s.runs.text}`);
    console.log(`  stn files list:    ${s.files.text}`);
    console.log(`  stn workflow runs, config.yaml setting log.level: ${s.runsLog.text}`);
    console.log(`  curl (baseline):   ${s.curl.text}`);
    console.log(`  bare Deno fetch:   ${s.deno.text}`);
    console.log(`  stn --version:     ${s.version.text}`);
    console.log(`  deno eval:         ${s.eval.text}`);
    if (AGAINST) {
      console.log(`  ${AGAINST} stn workflow runs: ${s.runsAgainst.text}`);
      console.log(`  ${AGAINST} stn files list:    ${s.filesAgainst.text}`);
      console.log(`  ${AGAINST} stn workflow runs, config.yaml setting log.level: ${s.runsLogAgainst.text}`);
    }
  } finally {
    serve.kill("SIGTERM");
    await serve.status;
    await Deno.remove(home, { recursive: true });
    await Deno.remove(logHome, { recursive: true });
  }
}

/** The README's main job, embedded, against `deno eval`, alternating RUNS times after one warm-up run. */
async function oneShot(): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "stn-bench-oneshot-" });
  const env = baseEnv(home);
  const args = ["workflow", "run", TRIAGE, "--input", '{"alerts": [{"name": "cpu", "severity": 9}]}'];
  const job = [STN, ...args];
  const base = [Deno.execPath(), "eval", "0"];
  // The other checkout's stn, in a STATION_HOME of its own (its ledger may be older).
  const otherHome = AGAINST ? await Deno.makeTempDir({ prefix: "stn-bench-oneshot-against-" }) : undefined;
  const other = AGAINST ? [join(AGAINST, "scripts", "stn"), ...args] : undefined;
  try {
    await measure(job, env); // creates the ledger and the NATS store, as cron's first run does
    if (other) await measure(other, baseEnv(otherHome!));
    const stn: Sample[] = [], bare: Sample[] = [], before: Sample[] = [];
    for (let i = 0; i < RUNS; i++) {
      stn.push(await measure(job, env));
      bare.push(await measure(base, env));
      if (other) before.push(await measure(other, baseEnv(otherHome!)));
    }
    const a = summary(stn), b = summary(bare);
    tableRow({
      figure: "embedded one-shot (the README's main job, `stn workflow run triage…`), median; peak RSS",
      value: `${a.med.toFixed(0)} ms (CPU ${a.cpu.toFixed(0)} ms); ${a.peak.toFixed(0)} MiB`,
      baseline: `deno eval ${b.med.toFixed(0)} ms (CPU ${b.cpu.toFixed(0)} ms); ${b.peak.toFixed(0)} MiB`,
      ratio: `×${(a.med / b.med).toFixed(1)}; ×${(a.peak / b.peak).toFixed(1)}`,
      target: "≤ 400 ms; ≤ 100 MiB",
    });
    console.log(`embedded one-shot (the README's main job), ${RUNS} alternating runs each:`);
    console.log(`  stn workflow run: ${a.text}; peak RSS ${a.peak.toFixed(0)} MiB`);
    console.log(`  deno eval:        ${b.text}; peak RSS ${b.peak.toFixed(0)} MiB`);
    if (other) {
      const o = summary(before);
      console.log(`  ${AGAINST}: ${o.text}; peak RSS ${o.peak.toFixed(0)} MiB`);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    if (otherHome) await Deno.remove(otherHome, { recursive: true });
  }
}

if (part !== "oneshot") await clientCommands();
if (part !== "client") await oneShot();
console.log(`load average: ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")} (2 cores)`);
