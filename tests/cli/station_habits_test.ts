import { assertEquals, assertStringIncludes, assertThrows } from "../helpers/assert.ts";
import { buildProgram } from "../../src/cli/main.ts";
import { translateStationHabits } from "../../src/cli/station_habits.ts";
import { StationError } from "../../src/errors.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

// The whole tree, as `stn --help` builds it.
const program = await buildProgram();
const translate = (args: string[]) => translateStationHabits(program, args);

function pointer(args: string[]): StationError {
  const err = assertThrows(() => translate(args), StationError) as StationError;
  assertEquals([err.code, err.exitCode], ["invalid_usage", 2]);
  return err;
}

Deno.test("habits: Station's flags are read as stn's, with a warning each", () => {
  assertEquals(translate(["--endpoint", "http://h:1", "agent", "list"]), {
    args: ["--station", "http://h:1", "agent", "list"],
    warnings: ["--endpoint is Station's flag: read as --station"],
  });
  assertEquals(translate(["agent", "list", "--endpoint=http://h:1"]).args, [
    "agent",
    "list",
    "--station=http://h:1",
  ]);
  assertEquals(translate(["workflow", "approvals", "approve", "A1", "-c", "ok"]).args, [
    "workflow",
    "approvals",
    "approve",
    "A1",
    "--comment",
    "ok",
  ]);
  assertEquals(translate(["workflow", "approvals", "reject", "A1", "-r", "no"]).args.slice(-2), [
    "--reason",
    "no",
  ]);
  // -c keeps stn's meaning elsewhere (sandbox exec's --code), and arguments after -- are a program's.
  assertEquals(translate(["sandbox", "exec", "S", "-c", "ls"]).args, ["sandbox", "exec", "S", "-c", "ls"]);
  assertEquals(translate(["workflow", "run", "w", "--", "--endpoint"]).args.at(-1), "--endpoint");
});

Deno.test("habits: --version N reaches a subcommand's own --version, else says the command has none", () => {
  assertEquals(translate(["workflow", "run", "greet", "--version", "2"]).args, [
    "workflow",
    "run",
    "greet",
    "--version=2",
  ]);
  assertEquals(translate(["workflow", "show", "greet", "--version", "3"]).args.at(-1), "--version=3");
  const err = pointer(["agent", "run", "echo", "--version", "1"]);
  assertEquals(err.message, "`stn agent run` has no --version option");
  assertEquals(translate(["--version"]).args, ["--version"]);
});

Deno.test("habits: Station's commands stn does otherwise answer with a one-line pointer", () => {
  const cases: Array<[string[], string]> = [
    [["runs", "list"], "stn agent runs"],
    [["runs", "inspect", "7"], "stn agent inspect RUN"],
    [["mcp", "list"], "stn env show ENV"],
    [["mcp", "tools"], "stn env show ENV"],
    [["mcp", "status"], "stn env show ENV"],
    [["agent", "create", "x"], "agents/NAME.prompt"],
    [["agents", "delete", "x"], "agents/NAME.prompt"],
    [["sync", "--dry-run"], "stn agent validate"],
  ];
  for (const [args, hint] of cases) {
    const err = pointer(args);
    assertStringIncludes(err.message, "is Station's", args.join(" "));
    assertStringIncludes(err.hint!, hint, args.join(" "));
  }
});

Deno.test("habits: a typo'd option is answered with the option meant", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["workflow", "run", "greet", "--imput", "{}"], { env: home.env });
    assertEquals(r.code, 2, r.stderr);
    assertStringIncludes(r.stderr, "unknown option '--imput'");
    assertStringIncludes(r.stderr, "Did you mean --input?");
  } finally {
    await home.cleanup();
  }
});
