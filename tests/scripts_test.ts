import { fileURLToPath } from "node:url";
import { compileArgs } from "../scripts/compile.ts";
import { STN_V8_FLAGS } from "../src/build/stn_flags.ts";
import { assertEquals, assertMatch, assertStringIncludes } from "./helpers/assert.ts";
import { processesOf } from "../scripts/lib/processes.ts";
import { cpuWaitClock } from "../scripts/lib/cpu_wait.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("scripts/stn and the compile task run stn with the V8 flags the tests and benchmarks use", () => {
  const flag = `--v8-flags=${STN_V8_FLAGS}`;
  assertStringIncludes(Deno.readTextFileSync(`${ROOT}scripts/stn`), `deno run -A --quiet ${flag} `);
  const tasks = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks;
  assertEquals(tasks.compile, "deno run -A scripts/compile.ts");
  const args = compileArgs({ output: "stn", target: "x86_64-unknown-linux-gnu", natsServer: null });
  assertEquals(args.slice(0, 3), ["compile", "-A", flag]);
});

// Only processes this test starts, on a temp dir of its own: other test runs on the machine are not touched.
Deno.test("scripts/lib/processes.ts finds what mentions a dir (command line, cwd, environment), stops it, and fails the run for it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-procs-" });
  const longer = `${dir}x`; // a longer name that starts with dir is not dir
  Deno.mkdirSync(longer);
  const sleeper = (options: { args?: string[]; cwd?: string; env?: Record<string, string> }) =>
    new Deno.Command("sleep", { args: ["600", ...(options.args ?? [])], cwd: options.cwd, env: options.env })
      .spawn();
  Deno.writeTextFileSync(`${dir}/log`, "");
  const byArgs = new Deno.Command("tail", { args: ["-f", `${dir}/log`], stdout: "null" }).spawn();
  const byCwd = sleeper({ cwd: dir });
  const byEnv = sleeper({ env: { TMPDIR: dir } });
  const other = sleeper({ cwd: longer, env: { TMPDIR: longer } });
  try {
    const found = processesOf(dir).map((p) => p.pid).sort();
    assertEquals(found, [byArgs.pid, byCwd.pid, byEnv.pid].sort());
    assertStringIncludes(processesOf(dir).find((p) => p.pid === byArgs.pid)!.args, `tail -f ${dir}/log`);

    const check = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", `${ROOT}scripts/lib/processes.ts`, dir, "0"],
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(check.stderr);
    assertEquals(check.code, 1, said);
    assertStringIncludes(said, "3 process(es) started by the tests outlived them (now stopped)");
    assertMatch(said, new RegExp(`pid ${byEnv.pid} \\(parent ${Deno.pid}\\): \\S*sleep 600\n`));
    assertEquals(processesOf(dir), []);
    for (const child of [byArgs, byCwd, byEnv]) assertEquals((await child.status).signal, "SIGKILL");
    assertEquals(
      processesOf(longer).map((p) => p.pid),
      [other.pid],
      "the other dir's process was left alone",
    );

    const clean = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", `${ROOT}scripts/lib/processes.ts`, dir, "0"],
      stderr: "piped",
    }).output();
    assertEquals([clean.code, new TextDecoder().decode(clean.stderr)], [0, ""]);
  } finally {
    for (const child of [byArgs, byCwd, byEnv, other]) {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
      await child.status;
    }
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(longer, { recursive: true });
  }
});

Deno.test("scripts/lib/cpu_wait.ts reads the main thread's CPU wait again and again from one open file (ms, never falling)", () => {
  const clock = cpuWaitClock();
  try {
    const reads = Array.from({ length: 50 }, () => clock.read());
    for (const [i, ms] of reads.entries()) {
      assertEquals(Number.isFinite(ms) && ms >= 0, true, `read ${i}: ${ms}`);
      if (i > 0) assertEquals(ms >= reads[i - 1], true, `read ${i} fell: ${reads[i - 1]} → ${ms}`);
    }
    if (Deno.build.os !== "linux") return;
    // Each read is the file's current value, not the first one again: a fresh read lies between two of its.
    const before = clock.read();
    const fresh = Number(Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/schedstat`).split(" ")[1]) / 1e6;
    const after = clock.read();
    assertEquals(before <= fresh && fresh <= after, true, `${before} ≤ ${fresh} ≤ ${after}`);
  } finally {
    clock.close();
  }
});
