import type { Command } from "./command.ts";
import { getAgent, listAgents } from "../client/agents.ts";
import type { AgentShow } from "../contract/agents.ts";
import type { SyncReport } from "../contract/sync.ts";
import { formatDuration } from "../lib/duration.ts";
import { formatInvalid } from "../workflows/definition/format.ts";
import { jsonMode, withStation } from "./context.ts";
import { validateAgents } from "./agent_validate.ts";
import { fields, note, render, table } from "./output.ts";

/**
 * `stn agent …`: the agents of an environment (docs/agents.md). `validate` (agent_validate.ts) reads
 * `.prompt` files locally; `list` and `show` read what `stn sync` stored, `list` with what cannot run. Running agents adds its
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
        "check .prompt files (default: the environment's agents folder, whose MCP tool names are also " +
          "checked against the discovered catalogue); prints file:line:col: error CODE: message (exit 1 if " +
          "any is invalid, warnings exit 0)",
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
          r.agents.length + r.invalid.length === 0
            ? `no agents in environment ${r.environment} (add environments/${r.environment}/agents/<Name>.prompt and run \`stn sync\`)`
            : [
              ...table(
                ["NAME", "STATUS", "MODEL", "STEPS", "TOOLS", "DESCRIPTION"],
                [
                  ...r.agents.map((a) => [
                    a.name,
                    a.status,
                    a.model ?? "(default)",
                    String(a.max_steps),
                    String(a.tools.length + a.agents.length + (a.sandbox ? 1 : 0)),
                    a.description,
                  ]),
                  ...r.invalid.map((a) => [a.name, "invalid", "-", "-", "-", "-"]),
                ],
              ),
              // Why each cannot run, one line each.
              ...r.agents.filter((a) => a.problem).map((a) => `${a.name}: ${a.status}: ${a.problem}`),
              ...r.invalid.map((a) => `${a.name}: invalid: ${a.problem}`),
            ],
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
