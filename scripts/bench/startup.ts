/**
 * Startup benchmark: time from `stn serve` spawn to a 200 on /health (median of N), and idle RSS of
 * the stn process and its managed nats-server. Baselines measured in the same run: a bare Deno HTTP
 * server answering its first request, and a bare `nats-server -js` reaching "Server is ready".
 *
 *   deno run -A scripts/bench/startup.ts [runs=5]
 */
import { fileURLToPath } from "node:url";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";

const RUNS = Number(Deno.args[0] ?? 5);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMiB = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function untilOk(url: string, child: Deno.ChildProcess): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`process exited before ${url} answered`);
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 5));
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Baseline 1: the same Deno runtime starting a trivial HTTP server. */
async function bareDeno(): Promise<number> {
  const port = freePort();
  const code =
    `Deno.serve({ port: ${port}, hostname: "127.0.0.1", onListen() {} }, () => new Response("ok"));`;
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), { args: ["eval", code], stdout: "null", stderr: "null" })
    .spawn();
  await untilOk(`http://127.0.0.1:${port}/`, child);
  const ms = performance.now() - t0;
  child.kill("SIGTERM");
  await child.status;
  return ms;
}

/** Baseline 2: nats-server with JetStream, start to ready. */
async function bareNats(): Promise<number> {
  const dir = await Deno.makeTempDir();
  const t0 = performance.now();
  const child = new Deno.Command("nats-server", {
    args: ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd", dir],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (text.includes("Server is ready")) break;
  }
  const ms = performance.now() - t0;
  child.kill("SIGTERM");
  await child.status;
  await Deno.remove(dir, { recursive: true });
  return ms;
}

/** stn serve: spawn to healthy; optionally the idle RSS after settling. */
async function stnServe(measureRss: boolean): Promise<{ ms: number; rss?: { stn: number; nats: number } }> {
  const home = await Deno.makeTempDir();
  const port = freePort();
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...STN_RUN_ARGS,
      MAIN,
      "serve",
      "--port",
      String(port),
      "--mcp-port",
      "0",
      "--agent-port",
      "0",
      "--log-level",
      "warn",
    ],
    env: { STATION_HOME: home },
    stdout: "null",
    stderr: "null",
  }).spawn();
  await untilOk(`http://127.0.0.1:${port}/health`, child);
  const ms = performance.now() - t0;
  let rss: { stn: number; nats: number } | undefined;
  if (measureRss) {
    await new Promise((r) => setTimeout(r, 3000));
    const natsPid = JSON.parse(Deno.readTextFileSync(`${home}/run/nats.pid`)).pid;
    rss = { stn: rssMiB(child.pid), nats: rssMiB(natsPid) };
  }
  child.kill("SIGTERM");
  await child.status;
  await Deno.remove(home, { recursive: true });
  return { ms, rss };
}

await stnServe(false); // warm the module cache so the first run is not an outlier
const base = { deno: [] as number[], nats: [] as number[], stn: [] as number[] };
let rss: { stn: number; nats: number } | undefined;
for (let i = 0; i < RUNS; i++) {
  base.deno.push(await bareDeno());
  base.nats.push(await bareNats());
  const r = await stnServe(i === 0);
  base.stn.push(r.ms);
  rss ??= r.rss;
}
const [d, n, s] = [median(base.deno), median(base.nats), median(base.stn)];
console.log(`startup, median of ${RUNS} (ms):`);
console.log(`  bare deno http server   ${d.toFixed(0).padStart(6)}`);
console.log(`  bare nats-server -js    ${n.toFixed(0).padStart(6)}`);
console.log(
  `  stn serve → healthy     ${s.toFixed(0).padStart(6)}   ${(s / d).toFixed(2)}× bare deno, ` +
    `${(s / (d + n)).toFixed(2)}× deno+nats started one after the other`,
);
console.log(
  `idle RSS after 3 s (MiB): stn ${rss!.stn.toFixed(1)}, managed nats-server ${rss!.nats.toFixed(1)}`,
);
