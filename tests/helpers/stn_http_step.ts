/**
 * The real `stn` CLI with one more step type, `http_get` (tests/helpers/http_step.ts), registered as
 * a plugin would: tests and benchmarks run `stn serve` and `stn worker` through it so steps wait on
 * a local HTTP server.
 */
import { runCli } from "../../src/stn.ts";
import { registerStepType } from "../../src/workflows/steps/registry.ts";
import { httpGet } from "./http_step.ts";

registerStepType(httpGet);
Deno.exit(await runCli(Deno.args));
