import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";
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
