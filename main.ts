import { runCli } from "./src/stn.ts";
Deno.exit(await runCli(Deno.args));
