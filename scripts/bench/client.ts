/**
 * Client command benchmark: `stn workflow runs` (the real CLI process, over HTTP) against a running
 * `stn serve`, vs curl fetching the same page from the same server and vs a bare Deno process doing that
 * fetch (the floor of any Deno CLI), alternating in the same run (min, median and max of RUNS each; the
 * machine's other load shows in the spread).
 *
 *   deno run -A scripts/bench/client.ts [runs=15]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tableRow } from "./table.ts";

const RUNS = Number(Deno.args[0] ?? 15);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const home = await Deno.makeTempDir({ prefix: "stn-bench-client-" });
const env: Record<string, string> = { ...Deno.env.toObject(), STATION_HOME: home, NO_COLOR: "1" };
for (const k of ["STATION_URL", "STATION_API_TOKEN"]) delete env[k];
env.STN_LOG_LEVEL = "warn";

const serve = new Deno.Command(Deno.execPath(), {
  args: [...STN_RUN_ARGS, MAIN, "serve", "--port", "0"],
  env,
  clearEnv: true,
  stdout: "null",
  stderr: "inherit",
}).spawn();

/** Wall time of one process run to exit, in ms; it must succeed. */
async function timed(cmd: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const o = await new Deno.Command(cmd, { args, env, clearEnv: true, stdout: "null", stderr: "piped" })
    .output();
  const ms = performance.now() - t0;
  if (o.code !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
  return ms;
}

const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(0)} ms`;
  return {
    med: s[Math.floor(s.length / 2)],
    text: `min ${f(s[0])}, median ${f(s[Math.floor(s.length / 2)])}, max ${f(s.at(-1)!)}`,
  };
};

try {
  let url = "";
  for (let i = 0; i < 400 && !url; i++) {
    try {
      url = JSON.parse(Deno.readTextFileSync(join(home, "run", "server.json"))).url;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!url) throw new Error("stn serve did not start");
  const stn: number[] = [];
  const curl: number[] = [];
  const deno: number[] = [];
  const fetchCode = `const r = await fetch("${url}/api/v1/workflow-runs"); console.log(await r.text());`;
  for (let i = 0; i < RUNS; i++) {
    curl.push(await timed("curl", ["-sf", `${url}/api/v1/workflow-runs`]));
    deno.push(await timed(Deno.execPath(), ["eval", fetchCode]));
    stn.push(await timed(Deno.execPath(), [...STN_RUN_ARGS, MAIN, "--station", url, "workflow", "runs"]));
  }
  const a = spread(stn), b = spread(curl), c = spread(deno);
  tableRow({
    figure: "client command against a running server (`stn workflow runs`), median",
    value: `${a.med.toFixed(0)} ms`,
    baseline: `curl ${b.med.toFixed(0)} ms; bare Deno fetch ${c.med.toFixed(0)} ms`,
    ratio: `×${(a.med / b.med).toFixed(1)} curl; ×${(a.med / c.med).toFixed(1)} Deno`,
    target: "≤ 120 ms",
  });
  console.log(`client command against a running server, ${RUNS} alternating runs each:`);
  console.log(`  stn workflow runs: ${a.text}`);
  console.log(`  curl (baseline):   ${b.text}`);
  console.log(`  bare Deno fetch:   ${c.text}`);
  console.log(
    `  median ratios: stn/curl ×${(a.med / b.med).toFixed(1)}, stn/bare Deno ×${
      (a.med / c.med).toFixed(1)
    } (target: stn ≤ 120 ms)`,
  );
} finally {
  serve.kill("SIGTERM");
  await serve.status;
  await Deno.remove(home, { recursive: true });
}
