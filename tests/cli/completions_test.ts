import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { childEnv, runStn, startServe, stnOnPath } from "../helpers/stn.ts";
import { buildProgram } from "../../src/cli/main.ts";
import { SHORT_FLAGS } from "../../src/cli/flags.ts";
import type { Command, Option } from "commander";

async function bash(
  script: string,
  args: string[] = [],
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command("bash", {
    args: ["-c", script, "bash", ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

Deno.test("stn completions bash: valid bash that completes every top-level command, subcommands and flags", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["completions", "bash"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    const file = home.path("stn.bash");
    Deno.writeTextFileSync(file, r.stdout);
    const syntax = await bash(`bash -n "$1"`, [file]);
    assertEquals(syntax.code, 0, syntax.err);

    // Load it as a user's shell does and ask what it offers, the way bash calls the function on TAB.
    const complete = async (line: string) => {
      const script = `source "$1"; COMP_WORDS=($2); COMP_CWORD=\${#COMP_WORDS[@]}; ` +
        `[[ "$2" == *" " ]] && COMP_WORDS+=("") || COMP_CWORD=$((COMP_CWORD - 1)); ` +
        `_stn; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const out = await bash(script, [file, line]);
      assertEquals(out.code, 0, out.err);
      return out.out.split("\n").filter(Boolean);
    };
    // commander keeps whether a command is hidden (`__complete`) in a private field.
    const top = buildProgram().commands.filter((c) => !(c as unknown as { _hidden: boolean })._hidden)
      .map((c) => c.name());
    const offered = await complete("stn ");
    for (const name of top) assert(offered.includes(name), `completes ${name}: ${offered}`);
    assertEquals(await complete("stn workflow approvals ap"), ["approve"]);
    assertEquals(await complete("stn workflows ru"), ["run", "runs"]);
    const flags = await complete("stn workflow runs --c");
    assert(flags.includes("--cursor") && flags.includes("--config"), `flags: ${flags}`);
  } finally {
    await home.cleanup();
  }
});

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
    ...(cmd.options as Option[]).map((option) => ({ path, option })),
    ...cmd.commands.flatMap((c) => allOptions(c, `${path} ${c.name()}`)),
  ];
}

Deno.test("short flags: one meaning per letter across every command, each listed in the help table", () => {
  const table = new Map(SHORT_FLAGS.map((f) => [f.short, f.long]));
  for (const { path, option } of allOptions(buildProgram())) {
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

/**
 * Drives zsh's real completion: an interactive `zsh -f` in a pseudo-terminal (zsh/zpty) loads compinit and
 * the script; once its prompt is up (zle reading keys, not the terminal's line editing, which would take the
 * Ctrl-U below) the line is typed and Tab pressed. compadd is wrapped to note the matches zsh keeps (after its
 * own prefix matching) in a file; zle handles keys in order, so the echo after Tab says it has finished.
 */
const ZSH_DRIVER = `
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PS1='> '; unsetopt autolist; setopt nobeep; autoload -Uz compinit; compinit -u -D; source \${(q)1}"
zpty -w z "compadd() { local -a hits; builtin compadd -O hits \\"\\$@\\"; print -rl -- \\$hits >> \${(q)3}; builtin compadd \\"\\$@\\" }"
zpty -w z "echo RE''ADY"
zpty -r z out '*READY*> *'
zpty -w -n z "$2"$'\\t'
zpty -w z $'\\C-u'"echo DO''NE"
zpty -r z out '*DONE*'
zpty -d z
`;

/** Runs a shell with args and `stn` on PATH; fails the test on a non-zero exit or anything on stderr. */
async function shell(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    env: childEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const dec = new TextDecoder();
  assertEquals([out.code, dec.decode(out.stderr)], [0, ""], `${cmd} ${args.join(" ")}`);
  return dec.decode(out.stdout);
}

Deno.test("stn completions zsh|fish: each shell accepts its script, and Tab offers commands, flags, files and the station's names", async () => {
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
  const scripts = { zsh: home.path("stn.zsh"), fish: home.path("stn.fish") };
  const serve = await startServe({ home: home.home, env: home.env });
  try {
    for (const [name, file] of Object.entries(scripts)) {
      const r = await runStn(["completions", name], { env: home.env });
      assertEquals(r.code, 0, r.stderr);
      Deno.writeTextFileSync(file, r.stdout);
    }
    const env = {
      ...home.env,
      PATH: `${stnOnPath(home.path("."))}:${Deno.env.get("PATH")}`,
      STATION_URL: serve.url,
    };
    await shell("zsh", ["-n", scripts.zsh], env);
    await shell("fish", ["--no-execute", scripts.fish], env);

    const stn = async (...args: string[]) => {
      const r = await runStn([...args, "--json"], { env });
      assertEquals(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    await stn("workflow", "apply", workflow);
    const runId = (await stn("run", "hello", "--wait")).run_id;
    const agentRun = (await stn("agent", "run", "Greeter", "hello there")).run_id;
    const key = (await stn("files", "upload", workflow, "--key", "notes/hello.yaml")).file_key;

    const completers = {
      zsh: async (line: string) => {
        const hits = home.path("zsh-hits");
        Deno.writeTextFileSync(hits, "");
        // timeout: a driver waiting for output that never comes ends (its pty's zsh with it) instead of hanging.
        await shell("timeout", ["120", "zsh", "-f", "-c", ZSH_DRIVER, "zsh", scripts.zsh, line, hits], env);
        return [...new Set(Deno.readTextFileSync(hits).split("\n").filter(Boolean))].sort();
      },
      fish: async (line: string) => {
        const out = await shell(
          "fish",
          ["-c", "source $argv[1]; complete -C $argv[2]", scripts.fish, line],
          env,
        );
        return out.split("\n").filter(Boolean).map((l) => l.split("\t")[0]).sort();
      },
    };
    // commander keeps whether a command is hidden (`__complete`) in a private field.
    const top = buildProgram().commands.filter((c) => !(c as unknown as { _hidden: boolean })._hidden)
      .map((c) => c.name());
    for (const [name, complete] of Object.entries(completers)) {
      const offered = await complete("stn ");
      for (const command of top) {
        assert(offered.includes(command), `${name} completes ${command}: ${offered}`);
      }
      assertEquals(await complete("stn workflow approvals ap"), ["approve"], name);
      assertEquals(await complete("stn workflows ru"), ["run", "runs"], name);
      const flags = await complete("stn workflow runs --c");
      assert(flags.includes("--cursor") && flags.includes("--config"), `${name} flags: ${flags}`);
      assertEquals(await complete("stn workflow show "), ["hello"], name);
      assertEquals(await complete("stn run h"), ["hello"], name);
      assertEquals(await complete("stn workflow inspect "), [runId], name);
      assertEquals(await complete("stn agent show "), ["Greeter"], name);
      assertEquals(await complete("stn agent inspect "), [agentRun], name);
      assertEquals(await complete("stn env show "), ["default"], name);
      assertEquals(await complete("stn files info "), [key], name);
      // Where no station name fits, the shell's own file completion is left in place.
      const files = await complete(`stn workflow apply ${home.path("hello.wo")}`);
      assert(files.some((f) => f.endsWith("hello.workflow.yaml")), `${name} files: ${files}`);
    }
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
