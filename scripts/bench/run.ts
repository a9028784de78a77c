/** Runs every benchmark in scripts/bench/ one after the other, then prints their summary table: `deno task bench`. */
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { markdownTable, ROW_MARK, type TableRow } from "./table.ts";

const here = new URL(".", import.meta.url);
const names = [...Deno.readDirSync(here)]
  .map((e) => e.name)
  .filter((n) => n.endsWith(".ts") && n !== "run.ts" && n !== "table.ts")
  .sort();
const rows: TableRow[] = [];
let failed = 0;
for (const name of names) {
  console.log(`\n== ${name}`);
  const child = new Deno.Command(Deno.execPath(), {
    // In-process benchmarks (engine, definitions) run under the V8 flags the shipped stn runs with.
    args: [...STN_RUN_ARGS, new URL(name, here).pathname],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  // Output passes through as it comes; summary rows are kept for the table instead.
  let rest = "";
  for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + text).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith(ROW_MARK)) rows.push(JSON.parse(line.slice(ROW_MARK.length)));
      else console.log(line);
    }
  }
  if (rest) console.log(rest);
  if (!(await child.status).success) failed++;
}
console.log(`\n== summary (each figure against its baseline in this run)\n\n${markdownTable(rows)}`);
Deno.exit(failed ? 1 : 0);
