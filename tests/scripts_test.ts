import { fileURLToPath } from "node:url";
import { compileArgs } from "../scripts/compile.ts";
import { STN_V8_FLAGS } from "../scripts/stn_flags.ts";
import { assertEquals, assertStringIncludes } from "./helpers/assert.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("scripts/stn and the compile task run stn with the V8 flags the tests and benchmarks use", () => {
  const flag = `--v8-flags=${STN_V8_FLAGS}`;
  assertStringIncludes(Deno.readTextFileSync(`${ROOT}scripts/stn`), `deno run -A --quiet ${flag} `);
  const tasks = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks;
  assertEquals(tasks.compile, "deno run -A scripts/compile.ts");
  const args = compileArgs({ output: "stn", target: "x86_64-unknown-linux-gnu", natsServer: null });
  assertEquals(args.slice(0, 3), ["compile", "-A", flag]);
});
