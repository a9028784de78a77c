import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "commander";
import { join } from "node:path";
import { getAgent, listAgents } from "../client/agents.ts";
import type { AgentShow } from "../contract/agents.ts";
import type { SyncReport } from "../contract/sync.ts";
import { StationError, usageError } from "../errors.ts";
import { formatDuration } from "../lib/duration.ts";
import { formatInvalid, formatIssue } from "../workflows/definition/format.ts";
import type { ValidationIssue } from "../workflows/definition/validate.ts";
import { commandConfig, jsonMode, withStation } from "./context.ts";
import { localFileError } from "./local_files.ts";
import { fail, fields, note, render, type Style, table } from "./output.ts";

/**
 * `stn agent …`: the agents of an environment (docs/agents.md). `validate` reads `.prompt` files
 * locally, without a server; `list` and `show` read what `stn sync` stored. Running agents adds its
 * subcommands to the group `registerAgentCommands` returns.
 */

/** `--env NAME` of the agent commands (an environment, not `sandbox exec`'s NAME=value). */
export interface EnvOption {
  env?: string;
}

/** Adds `--env NAME` to an agent subcommand. */
export function envOption(cmd: Command): Command {
  return cmd.option("--env <name>", "the environment (default: workflows.environment from config)");
}

/** One file's validation, as `agent validate --json` shows it. */
interface FileReport {
  file: string;
  name: string;
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/** The files to validate: those given (each must be a readable file), else the environment's agents folder. */
async function validateTargets(files: string[], environment: string, cmd: Command): Promise<string[]> {
  if (files.length === 0) {
    const dir = join(commandConfig(cmd).paths.environments, environment, "agents");
    const { promptFiles } = await lazyImport<typeof import("../agents/definition/mod.ts")>(
      "../agents/definition/mod.ts",
      import.meta.url,
    );
    const found = await promptFiles(dir);
    if (found.length) return found;
    throw usageError(
      "no_agent_files",
      `no .prompt files in ${dir}`,
      "pass the files to check, or --env NAME for another environment",
    );
  }
  for (const f of files) {
    try {
      if ((await Deno.stat(f)).isDirectory) throw new Deno.errors.IsADirectory();
    } catch (err) {
      throw localFileError(f, err);
    }
  }
  return files;
}

function validateText(report: { files: FileReport[] }, style: Style): string[] {
  const paint = { error: style.red, warning: style.yellow, dim: style.dim };
  const lines: string[] = [];
  for (const r of report.files) {
    for (const e of r.errors) lines.push(...formatIssue(r.file, e, "error", paint));
    for (const w of r.warnings) lines.push(...formatIssue(r.file, w, "warning", paint));
    if (r.valid) {
      const n = r.warnings.length;
      lines.push(`${r.file}: ${style.green("ok")}${n ? ` (${n} warning${n === 1 ? "" : "s"})` : ""}`);
    }
  }
  return lines;
}

/** `agent validate`: every issue of every file; exit 1 when any file has an error. */
async function validateAgents(files: string[], opts: EnvOption, cmd: Command): Promise<void> {
  const environment = opts.env ?? commandConfig(cmd).values.workflows.environment;
  const targets = await validateTargets(files, environment, cmd);
  const { loadAgentFiles } = await lazyImport<typeof import("../agents/definition/mod.ts")>(
    "../agents/definition/mod.ts",
    import.meta.url,
  );
  const results: FileReport[] = (await loadAgentFiles(targets, { environment })).map((a) => ({
    file: a.path,
    name: a.name,
    valid: a.errors.length === 0,
    errors: a.errors,
    warnings: a.warnings,
  }));
  const invalid = results.filter((r) => !r.valid).length;
  const report = { valid: invalid === 0, files: results };
  const view = { json: jsonMode(cmd), text: validateText };
  if (!invalid) return render(report, view);
  fail(
    report,
    view,
    new StationError("agent_invalid", `${invalid} of ${results.length} agent files are invalid`, {
      hint: "each `error` line says what is wrong and its hint what to write (docs/agents.md)",
    }),
  );
}

/** `agent show`'s text view. */
function showText(r: AgentShow): string[] {
  const a = r.agent;
  const sandbox = a.sandbox &&
    [a.sandbox.mode, a.sandbox.runtime ?? a.sandbox.image, `session ${a.sandbox.session}`]
      .filter(Boolean).join(", ");
  const vars = Object.keys((a.input_schema?.properties ?? {}) as object).filter((k) => k !== "userInput");
  return fields([
    ["name", a.name],
    ["environment", a.environment],
    ["description", a.description],
    ["model", a.model ?? "(ai.model from config)"],
    ["max steps", String(a.max_steps)],
    ["timeout", formatDuration(a.timeout_ms)],
    ["tags", a.tags.join(", ")],
    ["tools", a.tools.join(", ")],
    ["agents", a.agents.join(", ")],
    ["variables", vars.join(", ")],
    ["output", a.output_schema ? "JSON matching the output schema" : "text"],
    ["sandbox", sandbox || ""],
    ["schedule", a.schedule ? `${a.schedule.cron}${a.schedule.enabled ? "" : " (disabled)"}` : ""],
    ["file", a.path],
    ["updated", r.updated_at],
  ]);
}

/** The agents part of `stn sync`'s text view (invalid files go to stderr). */
export function agentSyncLines(r: SyncReport): string[] {
  const a = r.agents;
  if (!a) return [];
  const names = (items: { name: string }[]) => items.map((i) => i.name).join(", ");
  const lines: string[] = [];
  if (a.created.length) lines.push(`agents created: ${names(a.created)}`);
  if (a.updated.length) lines.push(`agents updated: ${names(a.updated)}`);
  if (a.deleted.length) lines.push(`agents deleted (file removed): ${a.deleted.join(", ")}`);
  note((style) => a.invalid.flatMap((inv) => formatInvalid(inv).map((l) => `${style.red("invalid:")} ${l}`)));
  const warned = a.warnings.reduce((n, w) => n + w.warnings.length, 0);
  lines.push(
    `agents: ${a.created.length} created, ${a.updated.length} updated, ${a.unchanged.length} unchanged, ` +
      `${a.deleted.length} deleted, ${a.invalid.length} invalid` +
      (warned
        ? ` (${warned} warning${warned === 1 ? "" : "s"}: \`stn agent validate --env ${r.environment}\`)`
        : ""),
  );
  return lines;
}

/** `stn agent …`; returns the `agent` command so other parts can add subcommands (run, runs, inspect). */
export function registerAgentCommands(program: Command): Command {
  const agent = program.command("agent").alias("agents").description(
    "check, list, show and run the agents of an environment (agents/<Name>.prompt files), and inspect their runs",
  );

  envOption(
    agent.command("validate [files...]")
      .description(
        "check .prompt files without a server (default: the environment's agents folder); " +
          "prints file:line:col: error CODE: message (exit 1 if any is invalid, warnings exit 0)",
      ),
  ).action(async (files: string[], opts: EnvOption, cmd: Command) => {
    await validateAgents(files, opts, cmd);
  });

  envOption(agent.command("list").description("list the agents `stn sync` stored for an environment"))
    .action(async (opts: EnvOption, cmd: Command) => {
      const answer = await withStation(cmd, (client) => listAgents(client, opts.env));
      render(answer, {
        json: jsonMode(cmd),
        text: (r) =>
          r.agents.length === 0
            ? `no agents in environment ${r.environment} (add environments/${r.environment}/agents/<Name>.prompt and run \`stn sync\`)`
            : table(
              ["NAME", "MODEL", "STEPS", "TOOLS", "DESCRIPTION"],
              r.agents.map((a) => [
                a.name,
                a.model ?? "(default)",
                String(a.max_steps),
                String(a.tools.length + a.agents.length + (a.sandbox ? 1 : 0)),
                a.description,
              ]),
            ),
      });
    });

  envOption(
    agent.command("show <name>")
      .description("show an agent's definition (--json: everything, the prompt file included)")
      .option("--prompt", "print the .prompt file as written instead"),
  ).action(async (name: string, opts: EnvOption & { prompt?: boolean }, cmd: Command) => {
    const answer = await withStation(cmd, (client) => getAgent(client, name, opts.env));
    render(answer, {
      json: jsonMode(cmd),
      text: (r) => opts.prompt ? r.agent.source.replace(/\n$/, "") : showText(r),
    });
  });

  return agent;
}
