/** `stn agent run|runs|inspect`: running an agent and reading its runs. */

import type { Command } from "commander";
import {
  agentRunEvents,
  getAgentRun,
  getAgentRunCassette,
  listAgentRuns,
  startAgentRun,
} from "../client/agent_runs.ts";
import type { AgentRun, AgentRunEvent } from "../contract/agent_runs.ts";
import { StationError, usageError } from "../errors.ts";
import { formatDuration } from "../lib/duration.ts";
import { idempotencyKeyFlag } from "./flags.ts";
import { jsonMode, withStation } from "./context.ts";
import { fail, fields, note, render, type Style, table } from "./output.ts";
import { RECORD_HELP, recordTarget, saveRecording } from "./record.ts";
import { moreNote, pageFlags, readPages } from "./paging.ts";

/** --var k=v, repeatable: the value as JSON when it parses (numbers, booleans, objects), else as text. */
function collectVar(raw: string, vars: Record<string, unknown>): Record<string, unknown> {
  const eq = raw.indexOf("=");
  if (eq < 1) {
    throw usageError("invalid_usage", `--var ${raw}: expected key=value`, "e.g. --var region=eu-west-1");
  }
  const value = raw.slice(eq + 1);
  let parsed: unknown = value;
  try {
    parsed = JSON.parse(value);
  } catch { /* plain text */ }
  return { ...vars, [raw.slice(0, eq)]: parsed };
}

/** One event of a run as a progress line on stderr. */
function describeEvent(e: AgentRunEvent, style: Style): string | undefined {
  const d = (e.data ?? {}) as Record<string, any>;
  switch (e.type) {
    case "turn_started":
      return style.dim(`turn ${d.turn}…`);
    case "model_responded":
      return `turn ${d.turn}: ${d.usage?.input_tokens ?? 0} in / ${d.usage?.output_tokens ?? 0} out` +
        (d.tool_calls?.length ? ` → ${d.tool_calls.join(", ")}` : "") +
        (d.text ? style.dim(` ${d.text}`) : "");
    case "tool_called":
      return `  ${style.bold(d.name)} ${JSON.stringify(d.arguments)}`;
    case "tool_returned":
      return `  ${d.name}: ${d.error ? style.red(`error: ${d.error}`) : `${d.output_bytes} bytes`}` +
        (d.truncated ? style.yellow(" (cut)") : "") + style.dim(` ${d.duration_ms}ms`);
    case "run_resumed":
      return style.yellow(`resumed after turn ${d.turns}`);
    default:
      return undefined;
  }
}

/** The answer a run gives on stdout: its JSON result when it has an output schema, else its text. */
function answerLines(run: AgentRun): string[] {
  if (run.result !== undefined) return [JSON.stringify(run.result, null, 2)];
  return run.response ? [run.response] : [];
}

function usageText(run: AgentRun): string {
  const u = run.usage;
  return `${u.input_tokens} in (${u.cached_tokens} cached) / ${u.output_tokens} out / ${u.total_tokens} total`;
}

/** Adds `run`, `runs` and `inspect` to the `stn agent` command group. */
export function agentRunCommands(agent: Command): Command {
  agent.command("run")
    .description("run an agent on a task; prints its answer (or its JSON result) on stdout")
    .argument("<name>", "the agent (its .prompt file name)")
    .argument("<task>", "what the agent should do")
    .option("--var <key=value>", "an input variable (repeatable; JSON values are parsed)", collectVar, {})
    .option("--env <environment>", "the agent's environment (default: workflows.environment)")
    .option("-F, --follow", "print turns and tool calls on stderr (the default on a terminal)")
    .option(
      "--idempotency-key <key>",
      "start at most one run per key within 24 h: a repeat follows the run the key started",
    )
    .option("--record <file>", RECORD_HELP)
    .addHelpText(
      "after",
      "\nExit codes: 0 answered, 1 the run failed or was canceled, 3 max_steps hit without an answer." +
        "\n--record writes the cassette when the run ends, also when it failed (docs/testing.md#cassettes)." +
        "\nA start the server may not have received is retried with one Idempotency-Key (never two runs).",
    )
    .action(async (
      name: string,
      task: string,
      opts: {
        var: Record<string, unknown>;
        env?: string;
        follow?: boolean;
        idempotencyKey?: string;
        record?: string;
      },
      cmd,
    ) => {
      const recordTo = await recordTarget(opts.record);
      await withStation(cmd, async (client) => {
        const started = await startAgentRun(client, name, {
          task,
          variables: opts.var,
          environment: opts.env,
          ...(recordTo ? { record: true } : {}),
        }, { idempotencyKey: idempotencyKeyFlag(opts.idempotencyKey) });
        const follow = opts.follow ?? Deno.stderr.isTerminal();
        note((s) => s.dim(`run ${started.run_id} (${started.agent}, ${started.model})`));
        for await (const e of agentRunEvents(client, started.run_id)) {
          if (follow) note((style) => describeEvent(e, style));
        }
        const run = await getAgentRun(client, started.run_id);
        if (recordTo) await saveRecording(recordTo, await getAgentRunCassette(client, run.run_id));
        const options = { json: jsonMode(cmd), text: answerLines };
        if (run.status === "failed" || run.status === "canceled") {
          fail(run, options, runError(run));
        }
        if (run.finish_reason === "max_steps" && answerLines(run).length === 0) {
          fail(run, options, runError(run));
        }
        render(run, options);
      });
    });

  pageFlags(
    agent.command("runs")
      .description("list agent runs, newest first")
      .option("--agent <name>", "only runs of this agent")
      .option("--status <status>", "running, completed, failed or canceled"),
    50,
  ).action(
    async (opts: { agent?: string; status?: string; limit: string; cursor?: string; all?: boolean }, cmd) => {
      await withStation(cmd, async (client) => {
        const page = await readPages<"runs", AgentRun>(
          opts,
          "runs",
          (cursor, limit) =>
            listAgentRuns(client, {
              agent: opts.agent,
              status: opts.status as AgentRun["status"],
              cursor,
              limit,
            }),
        );
        render(page, {
          json: jsonMode(cmd),
          text: (p) => {
            moreNote(p.next_cursor);
            return table(
              ["RUN", "AGENT", "STATUS", "FINISH", "TURNS", "TOKENS", "STARTED"],
              p.runs.map((r) => [
                r.run_id,
                r.agent,
                r.status,
                r.finish_reason ?? "-",
                String(r.turns),
                String(r.usage.total_tokens),
                r.started_at,
              ]),
            );
          },
        });
      });
    },
  );

  agent.command("inspect")
    .description("show an agent run: its turns, tool calls and token usage")
    .argument("<run>", "agent run id")
    .action(async (runId: string, _opts, cmd) => {
      await withStation(cmd, async (client) => {
        render(await getAgentRun(client, runId), { json: jsonMode(cmd), text: inspectLines });
      });
    });
  return agent;
}

/** A workflow run's agent runs as a table: step, agent, status, turns, tokens, tool calls. */
export function agentRunTable(runs: AgentRun[]): string[] {
  return table(
    ["AGENT RUN", "STEP", "AGENT", "STATUS", "TURNS", "TOKENS IN/OUT", "TOOL CALLS"],
    runs.map((r) => [
      r.run_id,
      r.step_path ?? "-",
      r.agent,
      `${r.status}${r.finish_reason ? ` (${r.finish_reason})` : ""}`,
      String(r.turns),
      `${r.usage.input_tokens}/${r.usage.output_tokens}`,
      r.tool_calls.map((c) => c.name + (c.error ? "!" : "")).join(", ") || "-",
    ]),
  );
}

function inspectLines(r: AgentRun): string[] {
  return [
    ...fields([
      ["run", r.run_id],
      ["agent", `${r.agent} (${r.environment})`],
      ["model", r.model],
      ["status", `${r.status}${r.finish_reason ? ` (${r.finish_reason})` : ""}`],
      ["task", r.task],
      ["trigger", r.trigger],
      ["usage", usageText(r)],
      ["duration", r.duration_ms === null ? "-" : formatDuration(r.duration_ms)],
      ...(r.workflow_run_id ? [["workflow", `${r.workflow_run_id} ${r.step_path}`] as [string, string]] : []),
      ...(r.parent_run_id ? [["parent", r.parent_run_id] as [string, string]] : []),
      ...(r.error ? [["error", `${r.error.code}: ${r.error.message}`] as [string, string]] : []),
    ]),
    "",
    ...table(
      ["TURN", "TOKENS IN/OUT", "DURATION", "TOOLS", "TEXT"],
      (r.history ?? []).map((t) => [
        String(t.turn),
        `${t.usage.input_tokens}/${t.usage.output_tokens}`,
        formatDuration(t.duration_ms),
        t.tool_calls.join(", ") || "-",
        t.text.replace(/\s+/g, " ").slice(0, 60),
      ]),
    ),
    "",
    ...table(
      ["TURN", "TOOL", "BYTES", "CUT", "DURATION", "ERROR"],
      r.tool_calls.map((c) => [
        String(c.turn),
        c.name,
        String(c.output_bytes ?? "-"),
        c.truncated ? "yes" : "",
        c.duration_ms === null ? "-" : formatDuration(c.duration_ms),
        c.error ?? "",
      ]),
    ),
    ...(r.response ? ["", r.response] : []),
  ];
}

function runError(run: AgentRun): StationError {
  const hint = `stn agent inspect ${run.run_id}`;
  if (run.finish_reason === "max_steps") {
    return new StationError("agent_max_steps", `agent ${run.agent} used all its turns without an answer`, {
      hint: `raise max_steps in its .prompt, or see what it did: ${hint}`,
    });
  }
  return new StationError(
    "agent_run_failed",
    `agent run ${run.run_id} ${run.status}: ${run.error?.message ?? ""}`,
    {
      hint,
    },
  );
}
