/** `stn agent run|runs|inspect`: running an agent and reading its runs. */

import type { Command } from "./command.ts";
import {
  agentRunEvents,
  getAgentRun,
  getAgentRunCassette,
  listAgentRuns,
  startAgentRun,
} from "../client/agent_runs.ts";
import { type AgentRun, type AgentRunEvent, describeWait } from "../contract/agent_runs.ts";
import { StationError, usageError } from "../errors.ts";
import { formatDuration } from "../lib/duration.ts";
import { formatUsd } from "../telemetry/cost.ts";
import { idempotencyKeyFlag, priorityFlag } from "./flags.ts";
import { jsonMode, withStation } from "./context.ts";
import { fail, fields, note, render, type Style, table } from "./output.ts";
import { RECORD_HELP, recordTarget, saveRecording } from "./record.ts";
import { pageFlags, readPages } from "./paging.ts";
import { showRuns, watchFlag } from "./watch.ts";

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

/** The fields of an event's data that progress lines show (each event type carries some of them). */
interface EventData {
  turn?: number;
  turns?: number;
  usage?: { input_tokens?: number; output_tokens?: number };
  tool_calls?: string[];
  text?: string;
  name?: string;
  arguments?: unknown;
  error?: string;
  output_bytes?: number;
  truncated?: boolean;
  duration_ms?: number;
  server?: string | null;
  removed?: string[];
  estimated_tokens?: number;
  fitted_tokens?: number;
  worker?: string;
  key?: string;
  position?: number;
  waited_ms?: number;
}

/** One event of a run as a progress line on stderr. */
function describeEvent(e: AgentRunEvent, style: Style): string | undefined {
  const d = (e.data ?? {}) as EventData;
  switch (e.type) {
    case "turn_started":
      return style.dim(`turn ${d.turn}…`);
    case "model_responded":
      return `turn ${d.turn}: ${d.usage?.input_tokens ?? 0} in / ${d.usage?.output_tokens ?? 0} out` +
        (d.tool_calls?.length ? ` → ${d.tool_calls.join(", ")}` : "") +
        (d.text ? style.dim(` ${d.text}`) : "");
    case "tool_called":
      return `  ${style.bold(`${d.name}`)} ${JSON.stringify(d.arguments)}` +
        (d.server ? style.dim(` (${d.server})`) : "");
    case "tool_returned":
      return `  ${d.name}: ${d.error ? style.red(`error: ${d.error}`) : `${d.output_bytes} bytes`}` +
        (d.truncated ? style.yellow(" (cut)") : "") + style.dim(` ${d.duration_ms}ms`);
    case "context_compacted":
      return style.yellow(
        `  context: ${
          d.removed?.length ?? 0
        } old tool output(s) removed (~${d.estimated_tokens} → ~${d.fitted_tokens} tokens)`,
      );
    case "run_resumed":
      return style.yellow(`resumed after turn ${d.turns}`);
    case "run_claimed":
      return style.dim(`taken by worker ${d.worker}`);
    case "run_waiting_for_concurrency":
      return style.yellow(`waiting for concurrency key ${d.key} (position ${d.position})`);
    case "run_admitted":
      return style.dim(`admitted after ${d.waited_ms}ms`);
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
  return `${u.input_tokens} in (${u.cached_tokens} cached) / ${u.output_tokens} out / ${u.total_tokens} total` +
    (run.cost_usd === null ? "" : ` (${formatUsd(run.cost_usd)})`);
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
    .option(
      "--queue <name>",
      "run it on a `stn worker` serving this task queue (over the agent's `queue:`); it waits for one",
    )
    .option("--priority <n>", "0 (last) to 9 (first) when the agent's concurrency slots are scarce")
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
        queue?: string;
        priority?: string;
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
          ...(opts.queue ? { queue: opts.queue } : {}),
          ...(opts.priority !== undefined ? { priority: priorityFlag(opts.priority) } : {}),
        }, { idempotencyKey: idempotencyKeyFlag(opts.idempotencyKey) });
        const follow = opts.follow ?? Deno.stderr.isTerminal();
        note((s) => s.dim(`run ${started.run_id} (${started.agent}, ${started.model})`));
        const wait = started.waiting_for;
        if (wait) note((s) => s.yellow(`${started.status}: waiting for ${describeWait(wait)}`));
        for await (const e of agentRunEvents(client, started.run_id)) {
          if (follow) note((style) => describeEvent(e, style));
        }
        const run = await getAgentRun(client, started.run_id);
        if (recordTo) await saveRecording(recordTo, await getAgentRunCassette(client, run.run_id));
        const json = jsonMode(cmd);
        const failed = run.status === "failed" || run.status === "canceled" ||
          (run.finish_reason === "max_steps" && answerLines(run).length === 0);
        if (failed) {
          // Nothing on stdout: `x=$(stn agent run …)` must not capture a rejected answer. People still
          // see what the model said, on stderr; --json puts the run in the error's details.
          if (!json) note((style) => answerLines(run).map((l) => style.dim(l)));
          fail(run, { json }, runError(run));
        }
        render(run, { json, text: answerLines });
      });
    });

  const runRow = (r: AgentRun) => [
    r.run_id,
    r.agent,
    r.status,
    r.finish_reason ?? "-",
    String(r.turns),
    String(r.usage.total_tokens),
    formatUsd(r.cost_usd),
    r.started_at,
  ];
  const RUN_HEADER = ["RUN", "AGENT", "STATUS", "FINISH", "TURNS", "TOKENS", "COST", "STARTED"];
  watchFlag(pageFlags(
    agent.command("runs")
      .description("list agent runs, newest first")
      .option("--agent <name>", "only runs of this agent")
      .option("--status <status>", "queued, running, waiting_for_concurrency, completed, failed or canceled"),
    50,
  )).action(
    async (
      opts: {
        agent?: string;
        status?: string;
        limit: string;
        cursor?: string;
        all?: boolean;
        watch?: boolean;
      },
      cmd,
    ) => {
      await withStation(cmd, async (client) => {
        const read = () =>
          readPages<"runs", AgentRun>(
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
        await showRuns(cmd, { watch: opts.watch, read, header: RUN_HEADER, row: runRow });
      });
    },
  );

  agent.command("inspect")
    .description("show an agent run: its turns, token usage and each tool call's input and output")
    .argument("<run>", "agent run id")
    .option("--full", "each tool call's whole output (default: its first 2 KB)")
    .action(async (runId: string, opts: { full?: boolean }, cmd) => {
      await withStation(cmd, async (client) => {
        render(await getAgentRun(client, runId, { full: opts.full }), {
          json: jsonMode(cmd),
          text: inspectLines,
        });
      });
    });
  return agent;
}

/** A workflow run's agent runs as a table: step, agent, status, turns, tokens, tool calls. */
export function agentRunTable(runs: AgentRun[]): string[] {
  return table(
    ["AGENT RUN", "STEP", "AGENT", "STATUS", "TURNS", "TOKENS IN/OUT", "COST", "TOOL CALLS"],
    runs.map((r) => [
      r.run_id,
      r.step_path ?? "-",
      r.agent,
      `${r.status}${r.finish_reason ? ` (${r.finish_reason})` : ""}`,
      String(r.turns),
      `${r.usage.input_tokens}/${r.usage.output_tokens}`,
      formatUsd(r.cost_usd),
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
      ...(r.waiting_for ? [["waiting for", describeWait(r.waiting_for)] as [string, string]] : []),
      ["task", r.task],
      ["trigger", r.trigger],
      ["usage", usageText(r)],
      ["duration", r.duration_ms === null ? "-" : formatDuration(r.duration_ms)],
      ...(r.workflow_run_id ? [["workflow", `${r.workflow_run_id} ${r.step_path}`] as [string, string]] : []),
      ...(r.parent_run_id ? [["parent", r.parent_run_id] as [string, string]] : []),
      ...(r.queue ? [["queue", `${r.queue} (worker ${r.owner ?? "-"})`] as [string, string]] : []),
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
      ["TURN", "TOOL", "SERVER", "STATUS", "BYTES", "CUT", "STARTED", "DURATION", "ERROR"],
      r.tool_calls.map((c) => [
        String(c.turn),
        c.name,
        c.server ?? "-",
        c.status,
        String(c.output_bytes ?? "-"),
        c.truncated ? "yes" : "",
        c.started_at,
        c.duration_ms === null ? "-" : formatDuration(c.duration_ms),
        c.error ?? "",
      ]),
    ),
    ...r.tool_calls.flatMap(toolCallLines),
    ...(r.response ? ["", r.response] : []),
  ];
}

/** One tool call's input and output, indented under a heading line. */
function toolCallLines(c: AgentRun["tool_calls"][number]): string[] {
  const indent = (text: string) => text.split("\n").map((l) => `    ${l}`);
  const ended = c.ended_at ? ` → ${c.ended_at}` : "";
  const removed = c.removed_at_turn === null
    ? ""
    : ` (removed from the context at turn ${c.removed_at_turn})`;
  return [
    "",
    `turn ${c.turn} ${c.name} [${c.call_id}]${
      c.server ? ` on ${c.server}` : ""
    }: ${c.status}, ${c.started_at}${ended}`,
    "  input:",
    ...indent(JSON.stringify(c.arguments, null, 2)),
    `  output${removed}:`,
    ...indent(c.output ?? "-"),
    ...(c.output_partial ? ["    … (the first 2 KB; --full shows all)"] : []),
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
