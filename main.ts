import { runCli } from "./src/cli/main.ts";
Deno.exit(await runCli(Deno.args));
