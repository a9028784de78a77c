import { parse } from "yaml";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { outputFormatArgs } from "../../src/cli/flags.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { completeIn } from "../helpers/shell_completion.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { childEnv, MAIN, runStn, startServe, stnOnPath, waitFor } from "../helpers/stn.ts";

/** Habits from gh/kubectl/docker: -o FORMAT, stn run, --watch, completion of the station's names. */

const HELLO = "id: hello\nstates:\n  - id: say\n    type: inject\n    data: {greeting: hi}\n";

/** `stn ARGS… --watch` in the background: what it printed so far, and Ctrl-C (its exit code). */
function watching(args: string[], env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, MAIN, ...args, "--watch"],
    env: childEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let out = "";
  const reading = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) out += chunk;
  })();
  return {
    out: () => out,
    interrupt: async () => {
      child.kill("SIGINT");
      const { code } = await child.status;
      await reading;
      return code;
    },
  };
}

Deno.test("-o json|yaml|table, stn run, --watch and completion of names against a running station", async (t) => {
  const home = await tempHome();
  const file = home.path("hello.workflow.yaml");
  Deno.writeTextFileSync(file, HELLO);
  const bin = stnOnPath(home.path("."));
  const script = home.path("stn.bash");
  const noStation = { ...home.env, PATH: `${bin}:${Deno.env.get("PATH")}` };
  const model = startModelServer();
  model.route(() => ({ text: "hi" }));
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  Deno.mkdirSync(home.path("environments/default/agents"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments/default/agents/Greeter.prompt"), "{{userInput}}\n");
  try {
    Deno.writeTextFileSync(script, (await runStn(["completions", "bash"], { env: home.env })).stdout);
    await t.step(
      "completion with no station running offers nothing, silently (never starts one)",
      async () => {
        assertEquals(await completeIn("bash", script, "stn workflow show ", noStation), []);
        const r = await runStn(["__complete", "workflows"], { env: home.env });
        assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
        let started = true;
        try {
          Deno.statSync(home.path("stn.db"));
        } catch {
          started = false;
        }
        assertEquals(started, false, "no embedded station was started for a completion");
      },
    );

    const serve = await startServe({ home: home.home, env: home.env });
    const env = { ...home.env, STATION_URL: serve.url };
    const stn = (...args: string[]) => runStn(args, { env });
    try {
      let runId = "";
      await t.step("stn run is workflow run: a stored workflow by id", async () => {
        assertEquals((await stn("workflow", "apply", file)).code, 0);
        const r = await stn("run", "hello", "--wait", "-o", "json");
        assertEquals(r.code, 0, r.stderr);
        runId = JSON.parse(r.stdout).run_id;
        assertEquals(JSON.parse(r.stdout).result, { greeting: "hi" });
        const help = await stn("run", "--help");
        assertStringIncludes(help.stdout, "shortcut for `stn workflow run`");
      });

      await t.step("-o json is --json, -o yaml the same object as YAML, -o table the text view", async () => {
        const json = JSON.parse((await stn("workflow", "runs", "-o", "json")).stdout);
        const yaml = parse((await stn("workflow", "runs", "-o", "yaml")).stdout);
        const flag = JSON.parse((await stn("--json", "workflow", "runs")).stdout);
        assertEquals(yaml.runs.map((r: { run_id: string }) => r.run_id), [runId]);
        assertEquals(json, flag);
        assertEquals(yaml.runs[0].status, json.runs[0].status);
        const inline = JSON.parse((await stn("workflow", "inspect", runId, "--output=json")).stdout);
        assertEquals(inline.run_id, runId);
        const text = await stn("workflow", "runs", "-o", "table");
        assertStringIncludes(text.stdout, "RUN");
        assertStringIncludes(text.stdout, runId);
        // Errors follow the format: YAML's error document under -o yaml.
        const missing = await stn("workflow", "inspect", "no-such-run", "-o", "yaml");
        assertEquals(missing.code, 1);
        assertEquals(parse(missing.stdout).error.code, "run_not_found");
      });

      await t.step(
        "completion offers the station's workflows, run ids, agents and environments",
        async () => {
          const withStation = { ...noStation, STATION_URL: serve.url };
          assertEquals(await completeIn("bash", script, "stn workflow show ", withStation), ["hello"]);
          assertEquals(await completeIn("bash", script, "stn run h", withStation), ["hello"]);
          assertEquals(await completeIn("bash", script, "stn workflow inspect ", withStation), [runId]);
          assertEquals(await completeIn("bash", script, "stn env show ", withStation), ["default"]);
          const names = JSON.parse((await stn("__complete", "runs", "--json")).stdout);
          assertEquals(names, { kind: "runs", names: [runId] });
        },
      );

      await t.step(
        "workflow runs --watch: the list, then a line per new or changed run; Ctrl-C ends it (exit 0)",
        async () => {
          const watch = watching(["workflow", "runs"], env);
          assert(
            await waitFor(() => watch.out().includes(runId), 30_000),
            `the first listing: ${watch.out()}`,
          );
          const second = JSON.parse((await stn("run", "hello", "--json")).stdout).run_id;
          assert(await waitFor(() => watch.out().includes(second), 30_000), `appended: ${watch.out()}`);
          assertEquals(await watch.interrupt(), 0);
          const out = watch.out();
          const lines = out.trim().split("\n");
          assertEquals(lines[0].split(/\s+/).slice(0, 3), ["RUN", "WORKFLOW", "STATUS"]);
          assertEquals(
            lines.filter((l) => l.startsWith(runId)).length,
            1,
            "an unchanged run is not repeated",
          );
        },
      );

      await t.step("agent runs --watch --json: one JSON object per new or changed run (NDJSON)", async () => {
        const watch = watching(["agent", "runs", "--json"], env);
        const ran = await stn("agent", "run", "Greeter", "hello there", "--json");
        assertEquals(ran.code, 0, ran.stderr);
        const agentRun = JSON.parse(ran.stdout).run_id;
        // The run ended before `agent run` returned, but the watch may first have seen it running: it
        // prints the change on a later poll.
        const statuses = () =>
          watch.out().trim().split("\n").filter((l) => l.includes(agentRun)).map((l) => JSON.parse(l).status);
        assert(await waitFor(() => statuses().includes("completed"), 30_000), watch.out());
        assertEquals(await watch.interrupt(), 0);
        const lines = watch.out().trim().split("\n").map((l) => JSON.parse(l));
        assertEquals(lines.filter((r) => r.run_id === agentRun).map((r) => r.status).at(-1), "completed");
        const withStation = { ...noStation, STATION_URL: serve.url };
        assertEquals(await completeIn("bash", script, "stn agent show ", withStation), ["Greeter"]);
        assertEquals(await completeIn("bash", script, "stn agent inspect ", withStation), [agentRun]);
      });
    } finally {
      await serve.stop();
      await model.close();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn completions powershell: a native completer with the command table and the station's names", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["completions", "powershell"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "Register-ArgumentCompleter -Native -CommandName stn");
    assertStringIncludes(r.stdout, "'workflow inspect' = @{ children = @(); options = @(");
    assertStringIncludes(r.stdout, "args = @('runs'); values = @(");
    assertStringIncludes(r.stdout, "'--env:environments'");
    assertStringIncludes(r.stdout, "'agent show' = @{");
    assertStringIncludes(r.stdout, "__complete $node.args[$n]");
  } finally {
    await home.cleanup();
  }
});

Deno.test("-o: json, yaml and table are formats anywhere before --; any other value stays a command's file", () => {
  const rewrite = (...args: string[]) => outputFormatArgs(args);
  assertEquals(rewrite("workflow", "runs", "-o", "json"), {
    args: ["workflow", "runs", "--json"],
    yaml: false,
  });
  assertEquals(rewrite("-o=yaml", "workers"), { args: ["--json", "workers"], yaml: true });
  assertEquals(rewrite("workers", "--output=table"), { args: ["workers"], yaml: false });
  assertEquals(rewrite("workers", "-ojson"), { args: ["workers", "--json"], yaml: false });
  assertEquals(rewrite("files", "download", "k", "-o", "out.json").args, [
    "files",
    "download",
    "k",
    "-o",
    "out.json",
  ]);
  assertEquals(rewrite("files", "download", "k", "-o", "./json").args, [
    "files",
    "download",
    "k",
    "-o",
    "./json",
  ]);
  assertEquals(rewrite("sandbox", "exec", "id", "--", "tool", "-o", "json").args, [
    "sandbox",
    "exec",
    "id",
    "--",
    "tool",
    "-o",
    "json",
  ]);
});
