/**
 * Many small files from a script (issue 36): N files of ~100 bytes uploaded to a running `stn serve` three
 * ways in the same run — a shell loop of `stn files upload FILE --key K` (one process per file), one
 * `stn files upload DIR --recursive` process, and a shell loop of `curl -T` PUTs (the baseline). The stn loop
 * may be timed on its first `loop_sample` files only (it costs a process start per file); its figure is then
 * scaled to N and says so.
 *
 *   deno run -A scripts/bench/files_many.ts [files=1000] [loop_sample=files]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tableRow } from "./table.ts";

const FILES = Number(Deno.args[0] ?? 1000);
const SAMPLE = Math.min(FILES, Number(Deno.args[1] ?? FILES));
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const home = await Deno.makeTempDir({ prefix: "stn-bench-files-many-" });
const dir = join(home, "many");
await Deno.mkdir(dir);
for (let i = 0; i < FILES; i++) {
  await Deno.writeTextFile(join(dir, `f${String(i).padStart(4, "0")}.txt`), `file ${i} `.repeat(10) + "\n");
}
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

/** Runs a bash script to exit; its wall time in seconds. */
async function bash(script: string): Promise<number> {
  const t0 = performance.now();
  const o = await new Deno.Command("bash", {
    args: ["-e", "-c", script],
    env,
    clearEnv: true,
    stderr: "piped",
  })
    .output();
  if (o.code !== 0) throw new Error(`${script}: ${new TextDecoder().decode(o.stderr)}`);
  return (performance.now() - t0) / 1000;
}

try {
  let url = "";
  for (let i = 0; i < 600 && !url; i++) {
    try {
      url = JSON.parse(Deno.readTextFileSync(join(home, "run", "server.json"))).url;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!url) throw new Error("stn serve did not start");
  const stn = `'${Deno.execPath()}' ${STN_RUN_ARGS.join(" ")} '${MAIN}' --station ${url}`;
  const sample = `ls '${dir}' | head -n ${SAMPLE}`;
  const curl = await bash(
    `cd '${dir}'; for f in *; do curl -sf -o /dev/null -T "$f" '${url}/api/v1/files/curl/'"$f"; done`,
  );
  const recursive = await bash(`${stn} files upload '${dir}' -r --key-prefix rec/ >/dev/null`);
  const loopSample = await bash(
    `cd '${dir}'; for f in $(${sample}); do ${stn} files upload "$f" --key "loop/$f" >/dev/null; done`,
  );
  const loop = loopSample * FILES / SAMPLE;
  const scaled = SAMPLE < FILES ? ` (timed on ${SAMPLE}, scaled)` : "";
  const s = (x: number) => `${x.toFixed(1)} s`;
  console.log(`${FILES} files of ~100 B to a running stn serve:`);
  console.log(`  curl -T loop (baseline):        ${s(curl)}`);
  console.log(`  stn files upload -r (1 process): ${s(recursive)}   ×${(recursive / curl).toFixed(2)} curl`);
  console.log(`  stn files upload loop:           ${s(loop)}${scaled}   ×${(loop / curl).toFixed(1)} curl`);
  tableRow({
    figure: `${FILES} small files: \`stn files upload -r\` / a shell loop of \`stn files upload\``,
    value: `${s(recursive)} / ${s(loop)}${scaled}`,
    baseline: `curl loop ${s(curl)}`,
    ratio: `×${(recursive / curl).toFixed(2)} / ×${(loop / curl).toFixed(1)}`,
    target: "report",
  });
} finally {
  serve.kill("SIGTERM");
  await serve.status;
  await Deno.remove(home, { recursive: true });
}
