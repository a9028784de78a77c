import { Command, CommanderError } from "commander";
import { EXIT_HOME_BUSY } from "../client/embedded.ts";
import { StationError, toStationError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { doctorCommand } from "./doctor.ts";
import { filesCommand } from "./files.ts";
import { CliExit, printError } from "./output.ts";
import { sandboxCommand } from "./sandbox.ts";
import { serveCommand } from "./serve.ts";
import { statusCommand } from "./status.ts";
import { workflowRunCommands } from "./runs.ts";
import { syncCommand, workflowCommand } from "./workflow.ts";

const HELP_FOOTER = `
Where commands send their work, first match wins:
  --station URL, STATION_URL, a running \`stn serve\` ($STATION_HOME/run/server.json),
  else an embedded runtime started for the one command.

Environment:
  STATION_HOME         data directory (default ~/.config/station)
  STATION_URL          server to talk to
  STATION_API_TOKEN    bearer token for servers bound beyond loopback
  STN_<SECTION>_<KEY>  any config.yaml key, e.g. STN_SERVER_PORT=9000
  NO_COLOR             plain output

Exit codes: 0 success, 1 failure, 2 usage error (bad flag, bad config);
  workflow run --wait: 3 run failed, 4 run canceled, 5 wait timed out;
  ${EXIT_HOME_BUSY} another stn is using STATION_HOME (embedded mode; nothing was started).`;

/** Builds the command tree. */
export function buildProgram(): Command {
  const program = new Command("stn")
    .description("stn — durable AI-agent workflows on NATS JetStream, SQLite and Docker sandboxes")
    .version(VERSION, "-V, --version", "print the version")
    .option("--station <url>", "server to talk to (default: STATION_URL, a running server, else embedded)")
    .option("--json", "print results as JSON for scripts")
    .option("--config <path>", "config file (default $STATION_HOME/config.yaml)")
    .option(
      "--no-wait-lock",
      `embedded mode: exit ${EXIT_HOME_BUSY} at once when another stn is using STATION_HOME (default: wait up to 5m)`,
    )
    .addHelpText("after", HELP_FOOTER)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  serveCommand(program);
  statusCommand(program);
  doctorCommand(program);
  sandboxCommand(program);
  filesCommand(program);
  workflowRunCommands(workflowCommand(program));
  syncCommand(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/**
 * Commander lets stn's own options appear anywhere, so `workflow show X --version 2` would print stn's
 * version. After the subcommand, `--version N` is rewritten to `--version=N`, which only the
 * subcommand's value-taking `--version` accepts.
 */
function subcommandVersionFlags(args: string[]): string[] {
  const takesValue = new Set(["--station", "--config"]);
  let i = 0;
  while (i < args.length && args[i].startsWith("-")) i += takesValue.has(args[i]) ? 2 : 1;
  const out = args.slice(0, i + 1);
  for (let j = i + 1; j < args.length; j++) {
    if (args[j] === "--version" && j + 1 < args.length && /^\d+$/.test(args[j + 1])) {
      out.push(`--version=${args[++j]}`);
    } else out.push(args[j]);
  }
  return out;
}

/** Runs the CLI and returns the process exit code (DESIGN §6). */
export async function runCli(args: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(subcommandVersionFlags(args), { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CliExit) return err.code;
    if (err instanceof CommanderError) {
      // Commander already printed its message; help and --version are successes.
      return err.exitCode === 0 ? 0 : 2;
    }
    const e = err instanceof StationError ? err : toStationError(err);
    printError(e);
    if (!(err instanceof StationError) && Deno.env.get("STN_DEBUG")) console.error(err);
    return e.exitCode;
  }
}
