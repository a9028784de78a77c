/**
 * Files benchmark. Against one `stn serve` (and its managed nats-server), in the same run:
 *  1. upload and download of SIZE MiB through `stn files` (the real CLI process, over HTTP) vs raw
 *     @nats-io/obj put/get of the same file on the same NATS server: MB/s and the ratios;
 *  2. peak RSS of the server and of the CLI during those transfers;
 *  3. the memory bound: a RSS_GIB GiB upload and download through the API while sampling the server's
 *     RSS from /proc — printed as the rise over its RSS just before.
 *
 *   deno run -A scripts/bench/files.ts [size_mib=256] [rss_gib=1]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { Objm, setSha256Backend } from "@nats-io/obj";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tableRow } from "./table.ts";
import { authConfigPath, readAuthConfig } from "../../src/nats/server.ts";

const SIZE_MIB = Number(Deno.args[0] ?? 256);
const RSS_GIB = Number(Deno.args[1] ?? 1);
const MiB = 1024 * 1024;
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const rssMiB = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

/** Samples the peak RSS of pids every 20 ms until stopped. */
function sampler(pids: () => number[]) {
  const peaks = new Map<number, number>();
  const timer = setInterval(() => {
    for (const pid of pids()) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, rssMiB(pid)));
  }, 20);
  return {
    peak: (pid: number) => peaks.get(pid) ?? 0,
    stop: () => clearInterval(timer),
  };
}

const home = await Deno.makeTempDir({ prefix: "stn-bench-files-" });
const env: Record<string, string> = {
  ...Deno.env.toObject(),
  STATION_HOME: home,
  NO_COLOR: "1",
  STN_STORAGE_MAX_FILE_SIZE: String(RSS_GIB * 1024 * MiB + MiB),
  STN_STORAGE_MAX_TOTAL_BYTES: String(8 * 1024 * MiB),
  STN_LOG_LEVEL: "warn",
};
for (const k of ["STATION_URL", "STATION_API_TOKEN"]) delete env[k];

const serve = new Deno.Command(Deno.execPath(), {
  args: [...STN_RUN_ARGS, MAIN, "serve", "--port", "0", "--mcp-port", "0", "--agent-port", "0"],
  env,
  clearEnv: true,
  stdout: "null",
  stderr: "inherit",
}).spawn();
let url = "";
for (let i = 0; i < 400 && !url; i++) {
  try {
    url = JSON.parse(Deno.readTextFileSync(join(home, "run", "server.json"))).url;
  } catch {
    await new Promise((r) => setTimeout(r, 50));
  }
}
if (!url) throw new Error("stn serve did not start");
const health = await (await fetch(`${url}/health`)).json();
// The managed nats-server only lets in the credentials stn generated for it.
const { user, password } = readAuthConfig(authConfigPath(join(home, "run", "nats.pid")));
const nc = await connect({ servers: health.nats.url, user, pass: password });

try {
  // 3 s first, so the baseline RSS is the server's idle RSS once its start has settled. (Its SQLite checkpoint
  // thread starts once the ledger's WAL holds 1 MiB; should a transfer's ledger writes get there, that thread's
  // ~14 MiB would count as the transfer's.)
  await new Promise((r) => setTimeout(r, 3_000));
  const idle = rssMiB(serve.pid);
  const total = RSS_GIB * 1024 * MiB;
  const block = new Uint8Array(MiB);
  crypto.getRandomValues(block.subarray(0, 65536));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= total) return c.close();
      c.enqueue(block.slice());
      sent += MiB;
    },
  });
  let rss = sampler(() => [serve.pid]);
  let t0 = performance.now();
  const put = await fetch(`${url}/api/v1/files/bench/rss.bin`, { method: "PUT", body });
  if (put.status !== 201) throw new Error(`1 GiB upload: ${put.status} ${await put.text()}`);
  const upSecs = (performance.now() - t0) / 1000;
  rss.stop();
  const upRise = rss.peak(serve.pid) - idle;
  rss = sampler(() => [serve.pid]);
  t0 = performance.now();
  let got = 0;
  for await (const chunk of (await fetch(`${url}/api/v1/files/bench/rss.bin`)).body!) got += chunk.length;
  const downSecs = (performance.now() - t0) / 1000;
  rss.stop();
  const downRise = rss.peak(serve.pid) - idle;
  if (got !== total) throw new Error(`1 GiB download returned ${got} bytes`);
  await fetch(`${url}/api/v1/files/bench/rss.bin`, { method: "DELETE" });
  const verdict = (rise: number) => `${rise.toFixed(1)} MiB ${rise < 64 ? "OK" : "OVER"}`;
  console.log(
    `memory bound: ${RSS_GIB} GiB through the API, server RSS idle ${
      idle.toFixed(0)
    } MiB (bound: rise < 64 MiB)`,
  );
  console.log(`  upload   ${(total / 1e6 / upSecs).toFixed(0)} MB/s, RSS rise ${verdict(upRise)}`);
  console.log(`  download ${(total / 1e6 / downSecs).toFixed(0)} MB/s, RSS rise ${verdict(downRise)}`);

  // 1 + 2: same file, raw obj vs stn files.
  const src = join(home, "src.bin");
  {
    const f = await Deno.open(src, { write: true, create: true });
    const chunk = new Uint8Array(MiB);
    for (let i = 0; i < SIZE_MIB; i++) {
      for (let j = 0; j < MiB; j += 65536) crypto.getRandomValues(chunk.subarray(j, j + 65536));
      await f.write(chunk);
    }
    f.close();
  }
  const mb = SIZE_MIB * MiB / 1e6;

  // The baseline at its best: node:crypto's SHA-256, as stn uses, not the store's ~3x slower pure-JS default.
  setSha256Backend("native");
  const raw = await new Objm(nc).create("bench-raw", { max_bytes: 4 * 1024 * MiB });
  t0 = performance.now();
  await raw.put({ name: "src.bin" }, (await Deno.open(src)).readable);
  const rawUp = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const res = await raw.get("src.bin");
  const out = await Deno.open(join(home, "raw.out"), { write: true, create: true, truncate: true });
  await res!.data.pipeTo(out.writable);
  const rawDown = (performance.now() - t0) / 1000;
  await raw.destroy();

  const cli = async (args: string[]) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [...STN_RUN_ARGS, MAIN, ...args],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const s = sampler(() => [serve.pid, child.pid]);
    const t = performance.now();
    const o = await child.output();
    const secs = (performance.now() - t) / 1000;
    s.stop();
    if (o.code !== 0) throw new Error(`stn ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
    return {
      secs,
      out: new TextDecoder().decode(o.stdout),
      cliPeak: s.peak(child.pid),
      serverPeak: s.peak(serve.pid),
    };
  };
  const up = await cli(["files", "upload", src, "--json"]);
  const key = JSON.parse(up.out).file_key;
  const down = await cli(["files", "download", key, "-o", join(home, "stn.out"), "--force"]);

  const rate = (s: number) => mb / s;
  for (const [what, raw, stn] of [["upload", rawUp, up.secs], ["download", rawDown, down.secs]] as const) {
    tableRow({
      figure: `\`stn files ${what}\`, ${SIZE_MIB} MiB (CLI process start included)`,
      value: `${rate(stn).toFixed(0)} MB/s`,
      baseline: `raw @nats-io/obj ${what === "upload" ? "put" : "get"} ${rate(raw).toFixed(0)} MB/s`,
      ratio: `×${(raw / stn).toFixed(2)}`,
      target: "≥ 0.9×",
    });
  }
  console.log(
    `\n${SIZE_MIB} MiB, same nats-server, same run (stn times include the CLI's start, ~40 ms):`,
  );
  console.log(
    `  upload:   raw obj ${rate(rawUp).toFixed(0)} MB/s, stn files ${rate(up.secs).toFixed(0)} MB/s, ` +
      `ratio stn/raw ${(rawUp / up.secs).toFixed(2)}`,
  );
  console.log(
    `  download: raw obj ${rate(rawDown).toFixed(0)} MB/s, stn files ${rate(down.secs).toFixed(0)} MB/s, ` +
      `ratio stn/raw ${(rawDown / down.secs).toFixed(2)}`,
  );
  console.log(
    `  peak RSS: server ${Math.max(up.serverPeak, down.serverPeak).toFixed(0)} MiB, ` +
      `CLI upload ${up.cliPeak.toFixed(0)} MiB, CLI download ${down.cliPeak.toFixed(0)} MiB`,
  );
} finally {
  await nc.close();
  serve.kill("SIGTERM");
  await serve.status;
  await Deno.remove(home, { recursive: true });
}
