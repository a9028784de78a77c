/**
 * The `stn` entry. `stn --version` answers from deno.json alone; every other command loads the CLI, which
 * is imported at run time so that `deno run` does not load its ~150 modules for the version (docs/benchmarks.md).
 */
import { VERSION } from "./src/version.ts";
import { lazyImport } from "./src/lib/lazy_import.ts";

if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-V")) {
  console.log(VERSION);
  Deno.exit(0);
}
const { runCli } = await lazyImport<typeof import("./src/stn.ts")>("./src/stn.ts", import.meta.url);
Deno.exit(await runCli(Deno.args));
