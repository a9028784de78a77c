import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { completeIn, runQuiet } from "../helpers/shell_completion.ts";
import { runStn, startServe, stnOnPath } from "../helpers/stn.ts";
import { buildProgram } from "../../src/cli/main.ts";
import { SHORT_FLAGS } from "../../src/cli/flags.ts";
import type { Command, Option } from "../../src/cli/command.ts";

Deno.test("stn completions zsh|fish print their scripts; --json wraps the script; other shells are a usage error", async () => {
  const home = await tempHome();
  try {
    const zsh = await runStn(["completions", "zsh"], { env: home.env });
    assert(zsh.stdout.startsWith("#compdef stn"), zsh.stdout.slice(0, 80));
    const fish = await runStn(["--json", "completions", "fish"], { env: home.env });
    const parsed = JSON.parse(fish.stdout);
    assertEquals(parsed.shell, "fish");
    assert(parsed.script.includes("complete -c stn"), parsed.script);
    const tcsh = await runStn(["completions", "tcsh"], { env: home.env });
    assertEquals(tcsh.code, 2);
  } finally {
    await home.cleanup();
  }
});

/** Every option of every command, with the command's path. */
function allOptions(cmd: Command, path = "stn"): Array<{ path: string; option: Option }> {
  return [
    ...cmd.options.map((option) => ({ path, option })),
    ...cmd.commands.flatMap((c) => allOptions(c, `${path} ${c.name()}`)),
  ];
}

Deno.test("short flags: one meaning per letter across every command, each listed in the help table", async () => {
  const table = new Map(SHORT_FLAGS.map((f) => [f.short, f.long]));
  for (const { path, option } of allOptions(await buildProgram())) {
    if (!option.short) continue;
    assert(table.has(option.short), `${path} uses ${option.short}, which the short-flag table does not list`);
    // A short-only alias (-R) stands for the long flag the table names.
    const long = option.long ?? table.get(option.short);
    assertEquals(
      long,
      table.get(option.short),
      `${path}: ${option.short} must mean ${table.get(option.short)}`,
    );
  }
});

Deno.test("stn completions bash|zsh|fish: each shell accepts its script; Tab offers commands, flags, files, the station's names", async () => {
  const home = await tempHome();
  const model = startModelServer();
  model.route(() => ({ text: "hi" }));
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  Deno.mkdirSync(home.path("environments/default/agents"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments/default/agents/Greeter.prompt"), "{{userInput}}\n");
  const workflow = home.path("hello.workflow.yaml");
  Deno.writeTextFileSync(
    workflow,
    "id: hello\nstates:\n  - id: say\n    type: inject\n    data: {greeting: hi}\n",
  );
  const serve = await startServe({ home: home.home, env: home.env });
  try {
    const env = {
      ...home.env,
      PATH: `${stnOnPath(home.path("."))}:${Deno.env.get("PATH")}`,
      STATION_URL: serve.url,
    };
    const stn = async (...args: string[]) => {
      const r = await runStn([...args, "--json"], { env });
      assertEquals(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    await stn("workflow", "apply", workflow);
    const runId = (await stn("run", "hello", "--wait")).run_id;
    const agentRun = (await stn("agent", "run", "Greeter", "hello there")).run_id;
    const key = (await stn("files", "upload", workflow, "--key", "notes/hello.yaml")).file_key;
    const top = (await buildProgram()).commands.filter((c) => !c.hidden)
      .map((c) => c.name());

    for (const shell of ["bash", "zsh", "fish"] as const) {
      const script = home.path(`stn.${shell}`);
      Deno.writeTextFileSync(script, (await stn("completions", shell)).script);
      await runQuiet(shell, [shell === "fish" ? "--no-execute" : "-n", script], env);
      const complete = (line: string) => completeIn(shell, script, line, env);

      const offered = await complete("stn ");
      for (const command of top) {
        assert(offered.includes(command), `${shell} completes ${command}: ${offered}`);
      }
      assertEquals(await complete("stn workflow approvals ap"), ["approve"], shell);
      assertEquals(await complete("stn workflows ru"), ["run", "runs"], shell);
      const flags = await complete("stn workflow runs --c");
      assert(flags.includes("--cursor") && flags.includes("--config"), `${shell} flags: ${flags}`);
      assertEquals(await complete("stn workflow show "), ["hello"], shell);
      assertEquals(await complete("stn run h"), ["hello"], shell);
      assertEquals(await complete("stn workflow inspect "), [runId], shell);
      assertEquals(await complete("stn agent show "), ["Greeter"], shell);
      assertEquals(await complete("stn agent inspect "), [agentRun], shell);
      assertEquals(await complete("stn env show "), ["default"], shell);
      assertEquals(await complete("stn files info "), [key], shell);
      // A flag's value: the station's names where it names one; never counted as a positional argument.
      assertEquals(await complete("stn agent run Greeter --env "), ["default"], shell);
      assertEquals(await complete("stn workflow runs --workflow "), ["hello"], shell);
      assertEquals(await complete("stn workflow approvals list --run "), [runId], shell);
      assertEquals(await complete("stn agent run --env default "), ["Greeter"], shell);
      assertEquals(await complete("stn workflow inspect -o json "), [runId], shell);
      // --flag=value, and a --station URL, whose = and : bash splits into words of their own.
      const envValue = await complete("stn agent run Greeter --env=de");
      assertEquals(envValue, [shell === "fish" ? "--env=default" : "default"], shell);
      assertEquals(await complete("stn agent run --env=default "), ["Greeter"], shell);
      assertEquals(await complete(`stn workflow inspect --station ${serve.url} `), [runId], shell);
      // A quoted value with blanks is one word (bash's COMP_WORDS keeps it whole; the script must too).
      assertEquals(await complete(`stn workflow run --input '{"a": 1}' h`), ["hello"], shell);
      // Where no station name fits, the shell's file completion stays (bash's through `complete -o default`,
      // which it applies after the function offered nothing).
      const files = await complete(`stn workflow apply ${home.path("hello.wo")}`);
      if (shell === "bash") assertEquals(files, [], "bash: the function leaves it to -o default");
      else assert(files.some((f) => f.endsWith("hello.workflow.yaml")), `${shell} files: ${files}`);
    }
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
