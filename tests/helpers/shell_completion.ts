/** What bash, zsh and fish offer on Tab for a command line, with a `stn completions` script loaded. */

import { assertEquals } from "./assert.ts";
import { childEnv } from "./stn.ts";

/** The shells whose completion the tests drive (PowerShell is not in Debian's packages). */
export type Shell = "bash" | "zsh" | "fish";

/**
 * bash's real completion, driven from zsh's zpty: an interactive bash in a pseudo-terminal loads the script,
 * wraps `_stn` to write what it offers (COMPREPLY) to a file, and gets the line typed and Tab pressed, so
 * COMP_WORDS, COMP_LINE and COMP_POINT are bash's own (it splits words at = and : too).
 */
const BASH_DRIVER = `
zmodload zsh/zpty || exit 3
zpty b bash --norc --noprofile -i
zpty -w b "PS1='> '; source \${(q)1}; complete -o default -F _stn_hits stn"
zpty -w b "_stn_hits() { _stn; printf '%s\\\\n' \\"\\\${COMPREPLY[@]}\\" > \${(q)3}; }"
zpty -w b "echo RE''ADY"
zpty -r b out '*READY*> *'
zpty -w -n b "$2"$'\\t'
zpty -w b $'\\C-u'"echo DO''NE"
zpty -r b out '*DONE*'
zpty -d b
`;

/**
 * zsh's real completion: an interactive `zsh -f` in a pseudo-terminal (zsh/zpty) loads compinit and the
 * script; once its prompt is up (zle reading keys, not the terminal's line editing, which would take the
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

/** Runs a program with `env` only; fails the test on a non-zero exit or anything on stderr. */
export async function runQuiet(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    env: childEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assertEquals([out.code, dec.decode(out.stderr)], [0, ""], `${cmd} ${args.join(" ")}`);
  return dec.decode(out.stdout);
}

/**
 * The words `shell` offers on Tab at the end of `line` with `script` loaded, sorted (the completion prints
 * nothing on stderr, or the test fails). `env` should put a `stn` on PATH: the scripts call it for names.
 */
export async function completeIn(
  shell: Shell,
  script: string,
  line: string,
  env: Record<string, string>,
): Promise<string[]> {
  let out: string;
  if (shell === "fish") {
    out = await runQuiet("fish", ["-c", "source $argv[1]; complete -C $argv[2]", script, line], env);
    out = out.split("\n").map((l) => l.split("\t")[0]).join("\n"); // a candidate, a tab, its description
  } else {
    const hits = await Deno.makeTempFile({ prefix: `stn-${shell}-hits-` });
    try {
      // timeout: a driver waiting for output that never comes ends (its pty's shell with it) instead of hanging.
      const driver = shell === "bash" ? BASH_DRIVER : ZSH_DRIVER;
      await runQuiet("timeout", ["120", "zsh", "-f", "-c", driver, "zsh", script, line, hits], env);
      out = await Deno.readTextFile(hits);
    } finally {
      await Deno.remove(hits);
    }
  }
  return [...new Set(out.split("\n").filter(Boolean))].sort();
}
