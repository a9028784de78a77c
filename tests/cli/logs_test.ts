import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { loadConfig } from "../../src/config/load.ts";
import { announce, forget } from "../../src/deploy/host.ts";
import { targetNames } from "../../src/deploy/lookup.ts";
import { openLogFile, readLogLines } from "../../src/lib/log_file.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { childEnv, MAIN, runStn, startServe, waitFor } from "../helpers/stn.ts";

Deno.test("stn logs reads stn serve's private log file: --tail, --since, --json, -F", async () => {
  const home = await tempHome();
  const serve = await startServe({ home: home.home, env: home.env });
  let follower: Deno.ChildProcess | undefined;
  try {
    assertEquals(Deno.statSync(home.path("logs")).mode! & 0o777, 0o700);
    assertEquals(Deno.statSync(home.path("logs", "stn.log")).mode! & 0o777, 0o600);
    const all = await runStn(["logs"], { env: home.env });
    assertEquals(all.code, 0, all.stderr);
    assertStringIncludes(all.stdout, "stn serve listening on");
    const one = await runStn(["logs", "--tail", "1"], { env: home.env });
    assertEquals(one.stdout.trim().split("\n").length, 1);
    const future = await runStn(["logs", "--since", "2999-01-01T00:00:00Z"], { env: home.env });
    assertEquals([future.code, future.stdout], [0, ""]);
    const recent = await runStn(["--json", "logs", "--since", "10m"], { env: home.env });
    const body = JSON.parse(recent.stdout);
    assertEquals(body.source, home.path("logs", "stn.log"));
    assert(body.lines.some((l: { text: string }) => l.text.includes("listening on")));
    const bad = await runStn(["logs", "--since", "yesterday-ish"], { env: home.env });
    assertEquals([bad.code, bad.stdout], [2, ""]);

    // -F prints what the server logs from now on: its stopping lines.
    follower = new Deno.Command(Deno.execPath(), {
      args: [...STN_RUN_ARGS, MAIN, "logs", "-F", "--tail", "0"],
      env: childEnv(home.env),
      clearEnv: true,
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let out = "";
    const reading = (async () => {
      for await (const c of follower.stdout.pipeThrough(new TextDecoderStream())) out += c;
    })();
    // The follower is up once it has read the file once; give it that moment through its own output.
    await new Promise((r) => setTimeout(r, 2000));
    await serve.stop();
    assert(await waitFor(() => out.includes("stn serve stopped"), 20_000), `followed: ${out}`);
    follower.kill("SIGINT");
    assertEquals((await follower.status).code, 0);
    await reading;
    follower = undefined;
  } finally {
    follower?.kill("SIGKILL");
    await serve.stop();
    await home.cleanup();
  }
});

Deno.test("the log file rotates by size, keeping the newest files; lines read back in order", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-logs-" });
  try {
    const file = openLogFile(dir, { maxBytes: 100, keep: 3 });
    for (let i = 0; i < 20; i++) {
      file.write(`2026-11-26T10:00:${String(i).padStart(2, "0")}.000Z info  line ${i}`);
    }
    file.close();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(names, ["stn.log", "stn.log.1", "stn.log.2", "stn.log.3"]);
    for (const n of names) assert(Deno.statSync(`${dir}/${n}`).size <= 100, n);
    const lines = readLogLines(dir);
    assertEquals(lines.at(-1)?.endsWith("line 19"), true);
    const numbers = lines.map((l) => Number(l.split(" ").at(-1)));
    assertEquals(numbers, [...numbers].sort((a, b) => a - b), "oldest first");
    assertEquals(readLogLines(dir, { since: Date.parse("2026-11-26T10:00:18Z") }).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stn up station is remembered by its home: after stn down, plain commands still mean it", async () => {
  const home = await tempHome();
  try {
    const paths = loadConfig({ env: home.env }).paths;
    announce(paths, {
      url: "http://127.0.0.1:1",
      mcpUrl: "http://127.0.0.1:2/mcp",
      agentMcpUrl: "http://127.0.0.1:3/mcp",
      pid: 1,
      container: "stn-named-x",
      tokenFile: home.path("up", "named-x.token"),
    });
    forget(paths, "stn-named-x"); // what `stn down` does to server.json
    assertEquals(targetNames(paths, undefined).container, "stn-named-x");
    assertEquals(targetNames(paths, "other").container, "stn-other");
  } finally {
    await home.cleanup();
  }
});
