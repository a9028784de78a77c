/**
 * Tracing overhead on the engine benchmark: runs scripts/bench/engine.ts with tracing off and on
 * (OTEL_DENO=true, exporting OTLP/JSON to a local receiver that reads and drops it), alternating, and
 * prints the medians and the on/off ratios of its per-step p50 and steps/s. Off against off shows the noise.
 *
 *   deno run -A scripts/bench/tracing.ts [rounds=2] [chains=15] [runs=500]
 */
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";

const ROUNDS = Number(Deno.args[0] ?? 2);
// One round per process in the default durability mode (engine.ts then prints that mode's figures only).
const ARGS = [Deno.args[1] ?? "15", Deno.args[2] ?? "500", "1", "fsync"];
const engine = new URL("engine.ts", import.meta.url).pathname;

let exported = 0;
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  exported += (await req.arrayBuffer()).byteLength;
  return Response.json({});
});

interface Sample {
  stepP50: number;
  stepsPerSec: number;
}

async function once(tracing: boolean): Promise<Sample> {
  const env: Record<string, string> = tracing
    ? {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    }
    : { OTEL_DENO: "false" };
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, engine, ...ARGS],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const step = /per-step p50 ([\d.]+) ms/.exec(text);
  const steps = /([\d.]+) steps\/s/.exec(text);
  if (out.code !== 0 || !step || !steps) throw new Error(`engine.ts failed:\n${text}`);
  return { stepP50: Number(step[1]), stepsPerSec: Number(steps[1]) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const off: Sample[] = [], on: Sample[] = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    off.push(await once(false));
    on.push(await once(true));
  }
} finally {
  await receiver.shutdown();
}
const show = (name: string, xs: Sample[]) =>
  console.log(
    `tracing ${name}: per-step p50 ${xs.map((s) => s.stepP50.toFixed(2)).join(" / ")} ms, ` +
      `${xs.map((s) => s.stepsPerSec.toFixed(0)).join(" / ")} steps/s`,
  );
show("off", off);
show("on ", on);
const stepRatio = median(on.map((s) => s.stepP50)) / median(off.map((s) => s.stepP50));
const runRatio = median(on.map((s) => s.stepsPerSec)) / median(off.map((s) => s.stepsPerSec));
console.log(`on/off (medians): per-step p50 ×${stepRatio.toFixed(2)}, steps/s ×${runRatio.toFixed(2)}`);
console.log(`(${(exported / 1024 / 1024).toFixed(1)} MiB of OTLP exported while on)`);
