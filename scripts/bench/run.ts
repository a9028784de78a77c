/** Runs every benchmark in scripts/bench/ one after the other: `deno task bench`. */
import { STN_RUN_ARGS } from "../stn_flags.ts";

const here = new URL(".", import.meta.url);
const names = [...Deno.readDirSync(here)]
  .map((e) => e.name)
  .filter((n) => n.endsWith(".ts") && n !== "run.ts")
  .sort();
let failed = 0;
for (const name of names) {
  console.log(`\n== ${name}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    // In-process benchmarks (engine, definitions) run under the V8 flags the shipped stn runs with.
    args: [...STN_RUN_ARGS, new URL(name, here).pathname],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) failed++;
}
Deno.exit(failed ? 1 : 0);
