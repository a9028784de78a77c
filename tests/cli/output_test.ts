import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { MAIN, runStn } from "../helpers/stn.ts";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";

const ESC = "\x1b[";
const BAD = "id: bad\nstates:\n  - id: a\n    type: nope\n";
const GOOD = "id: piped\nstates:\n  - id: a\n    type: transform\n    expression: '1'\n";

/** Single-quotes a word for sh. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs a shell line under a real pseudo-terminal (util-linux `script`): stdin, stdout and stderr of the
 * line are the terminal unless the line redirects them. Returns what reached the terminal.
 */
async function underTerminal(line: string, env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/tmp", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

Deno.test("colour: decided per stream; a redirected stdout gets none, NO_COLOR and --no-color turn it off", async () => {
  const home = await tempHome();
  try {
    const bad = home.path("bad.workflow.yaml");
    Deno.writeTextFileSync(bad, BAD);
    const stn = [Deno.execPath(), ...STN_RUN_ARGS, MAIN].map(q).join(" ");
    const env = { STATION_HOME: home.home }; // no NO_COLOR: the terminal decides
    const file = home.path("out.txt");

    // stdout to a file, stderr on the terminal: plain file, coloured error line.
    const terminal = await underTerminal(`${stn} workflow validate ${q(bad)} > ${q(file)}`, env);
    const written = Deno.readTextFileSync(file);
    assertStringIncludes(written, "error unknown_type");
    assert(!written.includes(ESC), `no escape codes in the file: ${JSON.stringify(written)}`);
    assertStringIncludes(terminal, `${ESC}31merror:${ESC}0m 1 of 1 files are invalid`);

    // Both on the terminal: stdout is coloured too (so the file above is plain because of the redirect).
    const both = await underTerminal(`${stn} workflow validate ${q(bad)}`, env);
    assertStringIncludes(both, `${ESC}31merror${ESC}0m unknown_type`);

    for (
      const [how, line, extra] of [
        ["NO_COLOR", `${stn} workflow validate ${q(bad)}`, { NO_COLOR: "1" }],
        ["--no-color", `${stn} --no-color workflow validate ${q(bad)}`, {}],
      ] as const
    ) {
      const plain = await underTerminal(line, { ...env, ...extra });
      assertStringIncludes(plain, "error: 1 of 1 files are invalid", how);
      assert(!plain.includes(ESC), `${how}: no escape codes on a terminal: ${JSON.stringify(plain)}`);
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("validate - and apply - read the definition from stdin", async () => {
  const home = await tempHome();
  try {
    const bad = await runStn(["workflow", "validate", "-"], { env: home.env, stdin: BAD });
    assertEquals(bad.code, 1);
    assertMatch(bad.stdout, /^<stdin>:4:11: error unknown_type: /m);
    const good = await runStn(["--json", "workflow", "validate", "-"], { env: home.env, stdin: GOOD });
    assertEquals(good.code, 0, good.stderr);
    assertEquals(JSON.parse(good.stdout).files[0], {
      file: "<stdin>",
      valid: true,
      errors: [],
      warnings: [],
    });
    const twice = await runStn(["workflow", "validate", "-", "-"], { env: home.env, stdin: GOOD });
    assertEquals(twice.code, 2);
    assertStringIncludes(twice.stderr, "error: `-` (stdin) can be given only once");

    const applied = await runStn(["--json", "workflow", "apply", "-"], { env: home.env, stdin: GOOD });
    assertEquals(applied.code, 0, applied.stderr);
    const [stored] = JSON.parse(applied.stdout).files;
    assertEquals([stored.file, stored.workflow.id, stored.outcome], ["<stdin>", "piped", "created"]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("a missing file is one clean message with a hint (exit 1), whichever command reads it", async () => {
  const home = await tempHome();
  try {
    const missing = "missing.workflow.yaml";
    for (
      const args of [
        ["workflow", "apply", missing],
        ["workflow", "run", missing],
        ["workflow", "run", "some-id", "--input", `@${missing}`],
        ["files", "upload", missing],
        ["sandbox", "run", "--file", missing],
      ]
    ) {
      const r = await runStn(args, { env: home.env, cwd: home.home });
      assertEquals(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assertStringIncludes(r.stderr, `error: cannot read ${missing}: no such file\nhint: check the path`);
      assert(!/os error|No such file or directory/.test(r.stderr), `no raw OS text: ${r.stderr}`);
    }
    const validate = await runStn(["workflow", "validate", missing], { env: home.env, cwd: home.home });
    assertEquals(validate.code, 1);
    assertStringIncludes(
      validate.stdout,
      `${missing}: error file_unreadable: cannot read ${missing}: no such file`,
    );
  } finally {
    await home.cleanup();
  }
});

Deno.test("--station host:port means http://host:port; a garbage address is a usage error with a hint", async () => {
  const home = await tempHome();
  try {
    const hostPort = await runStn(["--station", "127.0.0.1:1", "status"], { env: home.env });
    assertEquals(hostPort.code, 1);
    assertStringIncludes(hostPort.stderr, "error: cannot reach stn at http://127.0.0.1:1:");
    const env = await runStn(["status"], { env: { ...home.env, STATION_URL: "127.0.0.1:1" } });
    assertStringIncludes(env.stderr, "error: cannot reach stn at http://127.0.0.1:1:");

    const garbage = await runStn(["--json", "--station", "ftp://x y", "status"], { env: home.env });
    assertEquals(garbage.code, 2);
    assertEquals(JSON.parse(garbage.stdout).error.code, "invalid_station_url");
    assertStringIncludes(
      garbage.stderr,
      'error: --station "ftp://x y" is not a server address\nhint: give http://',
    );
  } finally {
    await home.cleanup();
  }
});
