/**
 * The CLI: the command tree, global options, and the exit code of a run (errors printed once, never a stack).
 */

import { Command, CommandExit } from "./command.ts";
import { EXIT_HOME_BUSY, type Runtime } from "../client/embedded.ts";
import { StationError, toStationError, usageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { addCommands } from "./commands.ts";
import { outputFormatArgs, shortFlagHelp } from "./flags.ts";
import { CliExit, disableColor, note, renderError, useYamlOutput } from "./output.ts";
import { translateStationHabits } from "./station_habits.ts";
import { useRuntime } from "./context.ts";

const HELP_FOOTER = `
Where commands send their work, first match wins:
  --station URL, STATION_URL, a running \`stn serve\` or \`stn up\` ($STATION_HOME/run/server.json),
  else an embedded runtime started for the one command.

Output: results on stdout (with --json or -o json one JSON object, errors as {"error": {...}}; -o yaml
  the same as YAML; -o table the text view), progress and errors on stderr. Colour only on a terminal, per stream; NO_COLOR or --no-color turn it off.

${shortFlagHelp()}

Environment:
  STATION_HOME         data directory (default ~/.config/station)
  STATION_URL          server to talk to
  STATION_API_TOKEN    bearer token for servers bound beyond loopback
  STN_<SECTION>_<KEY>  any config.yaml key, e.g. STN_SERVER_PORT=9000
  NO_COLOR             plain output
  OTEL_DENO=true       export OpenTelemetry traces to OTEL_EXPORTER_OTLP_ENDPOINT (docs/observability.md)

Exit codes: 0 success, 1 failure, 2 usage error (bad flag, bad config);
  workflow run --wait: 3 run failed, 4 run canceled, 5 wait timed out;
  agent run: 1 run failed or canceled, 3 max_steps hit without an answer;
  ${EXIT_HOME_BUSY} another stn is using STATION_HOME (embedded mode; nothing was started).
Scripting contract (streams, --json, paging, stdin, completions): docs/cli.md`;

/**
 * Builds the command tree `args` need (src/cli/commands.ts: the group they name, or all of it; no args
 * gives all); `runtime` is what `stn serve`, `stn worker` and embedded mode start.
 */
export async function buildProgram(runtime?: Runtime, args: string[] = []): Promise<Command> {
  const program = new Command("stn")
    .description("stn — durable AI-agent workflows on NATS JetStream, SQLite and Docker sandboxes")
    .version(
      VERSION,
      "-V, --version",
      "print the version number (`stn version`: commit, build, Deno, nats-server)",
    )
    .option("--station <url>", "server to talk to (default: STATION_URL, a running server, else embedded)")
    .option("--json", "print results as one JSON object for scripts (errors too); also -o json, -o yaml")
    .option("--no-color", "no colour on stdout or stderr (also NO_COLOR)")
    .option("--config <path>", "config file (default $STATION_HOME/config.yaml)")
    .option(
      "--no-wait-lock",
      `embedded mode: exit ${EXIT_HOME_BUSY} at once when another stn is using STATION_HOME (default: wait up to 5m)`,
    )
    .addHelpText("after", HELP_FOOTER)
    .showHelpAfterError("(run with --help for usage)");
  if (runtime) useRuntime(program, runtime);
  await addCommands(program, args);
  return program;
}

/** Silences the parser's own error text in every command (under --json runCli prints the error itself). */
function silenceParseErrors(cmd: Command): void {
  cmd.configureOutput({ outputError: () => {} }).showHelpAfterError(false);
  for (const sub of cmd.commands) silenceParseErrors(sub);
}

/**
 * The global switches that shape output, read before parsing: a usage error is found while parsing, and
 * it must already come out as JSON (or without colour). Arguments after `--` belong to a program, not stn.
 */
function outputSwitches(args: string[]): { json: boolean; noColor: boolean } {
  const end = args.indexOf("--");
  const own = end < 0 ? args : args.slice(0, end);
  return { json: own.includes("--json"), noColor: own.includes("--no-color") };
}

/** A parse error (src/cli/command.ts) as a usage error (exit 2); its text loses the `error: ` prefix. */
function parseUsageError(err: CommandExit): StationError {
  // A command group run without a subcommand shows its help (on stderr) and says so with "(outputHelp)".
  const message = err.code === "commander.help"
    ? "a subcommand is needed"
    : err.message.replace(/^error: /, "");
  return usageError("invalid_usage", message, "run the command with --help for its usage", {
    reason: err.code,
  });
}

/** Runs the CLI with the runtime it starts, and returns the process exit code (docs/design/errors.md#exit-codes). */
export async function runCli(given: string[], runtime: Runtime): Promise<number> {
  const { args, yaml } = outputFormatArgs(given);
  if (yaml) await useYamlOutput();
  const { json, noColor } = outputSwitches(args);
  if (noColor) disableColor();
  const program = await buildProgram(runtime, args);
  // With --json, the parser's own error text is replaced by the JSON error (and its stderr line) below.
  if (json) silenceParseErrors(program);
  try {
    const translated = translateStationHabits(program, args);
    note((style) => translated.warnings.map((w) => `${style.yellow("warning:")} ${w}`));
    await program.parseAsync(translated.args);
    return 0;
  } catch (err) {
    if (err instanceof CliExit) return err.code;
    if (err instanceof CommandExit) {
      // help and --version are successes; otherwise the parser has printed its message unless --json.
      if (err.exitCode === 0) return 0;
      if (json) renderError(parseUsageError(err), { json });
      return 2;
    }
    const e = err instanceof StationError ? err : toStationError(err);
    renderError(e, { json });
    if (!(err instanceof StationError) && Deno.env.get("STN_DEBUG")) console.error(err);
    return e.exitCode;
  }
}
