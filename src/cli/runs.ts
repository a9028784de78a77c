/** `stn workflow run|runs|inspect|logs|cancel|pause|resume|approvals`: workflow runs from the CLI. */

import type { Command } from "commander";
import { stringify } from "yaml";
import { listAgentRuns } from "../client/agent_runs.ts";
import { agentRunTable } from "./agent_runs.ts";
import {
  controlRun,
  decideApproval,
  getRun,
  getRunCassette,
  listApprovals,
  listRuns,
  runEvents,
  runSteps,
  startRun,
  waitForRun,
} from "../client/workflow_runs.ts";
import { runSignals } from "../client/events.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { formatDuration, parseDuration } from "../lib/duration.ts";
import type { Run as RunView, RunEvent } from "../contract/runs.ts";
import { idempotencyKeyFlag, priorityFlag } from "./flags.ts";
import { jsonMode, withStation } from "./context.ts";
import { issueLines, versionFlag } from "./workflow.ts";
import { readLocalText } from "./local_files.ts";
import { errStyle, fields, note, render, renderLine, type Style, table } from "./output.ts";
import { moreNote, pageFlags, readPages } from "./paging.ts";
import { RECORD_HELP, recordTarget, saveRecording } from "./record.ts";

/** Exit codes of `workflow run --wait` (docs/design/errors.md#exit-codes). */
const EXIT = { failed: 3, canceled: 4, timeout: 5 } as const;

/** Reads --input: inline JSON, `@file`, or `-` for stdin. */
async function readInput(raw: string | undefined): Promise<Record<string, unknown>> {
  if (raw === undefined) return {};
  let text = raw;
  if (raw === "-") text = await readLocalText("-");
  else if (raw.startsWith("@")) text = await readLocalText(raw.slice(1));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(
      "input_invalid_json",
      `--input is not valid JSON: ${errorMessage(err)}`,
      `e.g. --input '{"n": 3}'`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw usageError("input_not_object", "--input must be a JSON object", `e.g. --input '{"n": 3}'`);
  }
  return value as Record<string, unknown>;
}

function looksLikeFile(target: string): boolean {
  return /\.(ya?ml|json)$/.test(target) || target.includes("/");
}

/** Loads a definition file for `run`, printing each validation problem like `stn workflow validate`. */
async function definitionFromFile(path: string): Promise<unknown> {
  const { validateSource } = await import("../workflows/definition/load.ts");
  const result = validateSource(await readLocalText(path), { fileName: path });
  if (!result.valid) {
    note((style) => result.errors.flatMap((e) => issueLines(path, e, "error", style)));
    throw usageError("invalid_definition", `${path} is not a valid workflow definition`, undefined, {
      file: path,
      errors: result.errors,
    });
  }
  return result.definition;
}

/** One event as a log line, styled for the stream it goes to. */
function describeEvent(e: RunEvent, style: Style): string {
  const data = e.data && typeof e.data === "object" ? e.data as Record<string, unknown> : {};
  const bits: string[] = [];
  if (typeof data.attempt === "number" && data.attempt > 1) bits.push(`attempt ${data.attempt}`);
  if (data.error) bits.push((data.error as { code: string; message: string }).message);
  if (e.type === "approval_requested") bits.push(`approval ${data.approval_id}: ${data.message}`);
  return `${style.dim(e.time)} ${String(e.seq).padStart(4)} ${e.type.padEnd(20)} ${e.step ?? ""} ${
    bits.join(" ")
  }`
    .trimEnd();
}

/** Shows a finished run: its result on stdout (the whole run with --json), or fails with exit 3 or 4. */
function finish(run: RunView, json: boolean): void {
  if (run.status === "completed") {
    return render(run, { json, text: (r) => JSON.stringify(r.result, null, 2) });
  }
  const failed = run.status === "failed";
  throw new StationError(
    failed ? "run_failed" : "run_canceled",
    `run ${run.id} ${run.status}${run.error ? `: ${run.error.message}` : ""}`,
    {
      hint: `\`stn workflow inspect ${run.id}\` shows each step`,
      details: { run },
      exitCode: failed ? EXIT.failed : EXIT.canceled,
    },
  );
}

/** Adds run, runs, inspect, logs, cancel/pause/resume and approvals to the `workflow` command group. */
export function workflowRunCommands(workflow: Command): void {
  workflow.command("run")
    .description(
      "start a run of a stored workflow (by id), or run a definition file once (not stored: no schedule, no triggers); --wait for its result",
    )
    .argument("<workflow>", "workflow id, or a path to a .workflow.yaml|yml|json file")
    .option("--input <json>", "run input: a JSON object, @file.json, or - for stdin")
    .option("--version <n>", "a stored version of the workflow (default: the latest)")
    .option(
      "--save",
      "with a file: also store it as a workflow (as `stn workflow apply`), schedule and triggers on",
    )
    .option("--wait", "wait for the run to end; exit 3 failed, 4 canceled, 5 wait timed out")
    .option("-F, --follow", "print the run's events on stderr while waiting (implies --wait)")
    .option("--timeout <duration>", "with --wait: give up waiting after this long (exit 5), e.g. 10m")
    .option(
      "--idempotency-key <key>",
      "start at most one run per key within 24 h: a repeat answers the run the key started",
    )
    .option("--record <file>", `${RECORD_HELP}; implies --wait`)
    .option(
      "--priority <n>",
      "0 (last) to 9 (first) when concurrency slots are scarce (default: the workflow's)",
    )
    .addHelpText(
      "after",
      "\nA file runs once: it is not stored as a workflow, so its schedule and triggers stay off and" +
        "\n`stn workflow list` does not show it; the run keeps the exact definition (`stn workflow inspect" +
        "\nRUN --definition`). `stn workflow apply FILE` (or run --save) stores it." +
        "\nIn embedded mode (no server running) run always waits: the runtime stops when the command ends." +
        "\n--record writes the cassette of every agent run in the workflow run when it ends (docs/testing.md#cassettes)." +
        "\nA start the server may not have received (connection lost, no answer in time) is retried with" +
        "\none Idempotency-Key, so it never starts two runs; give --idempotency-key (e.g. a CI job id) to" +
        "\nmake re-running the whole command safe too (docs/scripting.md).",
    )
    .action(
      async (
        target: string,
        opts: {
          input?: string;
          version?: string;
          save?: boolean;
          wait?: boolean;
          follow?: boolean;
          timeout?: string;
          idempotencyKey?: string;
          record?: string;
          priority?: string;
        },
        cmd,
      ) => {
        const input = await readInput(opts.input);
        const recordTo = await recordTarget(opts.record);
        const timeoutMs = opts.timeout !== undefined ? parseDuration(opts.timeout) : undefined;
        if (timeoutMs === null) {
          throw usageError(
            "invalid_duration",
            `--timeout ${opts.timeout} is not a duration`,
            'e.g. "30s", "10m"',
          );
        }
        if (opts.save && !looksLikeFile(target)) {
          throw usageError(
            "invalid_request",
            "--save stores a definition file",
            `${target} is a stored workflow already; give a .workflow.yaml path to store it`,
          );
        }
        const version = versionFlag(opts.version);
        if (version !== undefined && looksLikeFile(target)) {
          throw usageError(
            "invalid_usage",
            "--version picks a stored version",
            "give a workflow id, not a file",
          );
        }
        const body = {
          ...(looksLikeFile(target)
            ? { definition: await definitionFromFile(target), save: opts.save }
            : { workflow_id: target, ...(version ? { version } : {}) }),
          input,
          trigger: "manual" as const,
          ...(recordTo ? { record: true } : {}),
          ...(opts.priority !== undefined ? { priority: priorityFlag(opts.priority) } : {}),
        };
        const json = jsonMode(cmd);
        await withStation(cmd, async (client, where) => {
          const run = await startRun(client, body, {
            idempotencyKey: idempotencyKeyFlag(opts.idempotencyKey),
          });
          const wait = opts.wait || opts.follow || recordTo || where.source === "embedded";
          if (!wait) return render(run, { json, text: (r) => r.id });
          note((style) => style.dim(`run ${run.id} started`));
          const done = await waitForRun(client, run.id, {
            timeoutMs,
            onEvent: opts.follow ? (e) => note(describeEvent(e, errStyle)) : undefined,
          });
          if (!done) {
            throw new StationError("wait_timeout", `timed out waiting for run ${run.id}; it keeps running`, {
              hint: `\`stn workflow inspect ${run.id}\` shows where it is`,
              details: { run_id: run.id },
              exitCode: EXIT.timeout,
            });
          }
          if (recordTo) await saveRecording(recordTo, await getRunCassette(client, run.id));
          finish(done, json);
        });
      },
    );

  pageFlags(
    workflow.command("runs")
      .description("list runs, newest first (one page; --cursor for the next, --all for every page)")
      .option("--workflow <id>", "only runs of this workflow")
      .option("--status <status>", "only runs with this status"),
    20,
  ).action(
    async (
      opts: { workflow?: string; status?: string; limit: string; cursor?: string; all?: boolean },
      cmd,
    ) => {
      await withStation(cmd, async (client) => {
        const page = await readPages<"runs", RunView>(
          opts,
          "runs",
          (cursor, limit) =>
            listRuns(client, { workflow_id: opts.workflow, status: opts.status, limit, cursor }),
        );
        render(page, {
          json: jsonMode(cmd),
          text: (p) => {
            moreNote(p.next_cursor);
            return table(
              ["RUN", "WORKFLOW", "STATUS", "CREATED", "ERROR"],
              p.runs.map((r) => [r.id, r.workflow_id, r.status, r.created_at, r.error?.message ?? ""]),
            );
          },
        });
      });
    },
  );

  workflow.command("inspect")
    .description("show a run and its steps: status, attempts, durations, errors")
    .argument("<run>", "run id")
    .option("--trace", "print only the run's trace id (to find its spans in Jaeger, Tempo, …)")
    .option("--definition", "print only the exact definition the run runs (YAML; JSON with --json)")
    .action(async (runId: string, opts: { trace?: boolean; definition?: boolean }, cmd) => {
      await withStation(cmd, async (client) => {
        if (opts.definition) {
          const { definition } = await getRun(client, runId);
          render(definition, { json: jsonMode(cmd), text: (d) => stringify(d).trimEnd() });
          return;
        }
        if (opts.trace) {
          const { trace_id } = await getRun(client, runId);
          render({ run: runId, trace_id }, { json: jsonMode(cmd), text: (r) => [r.trace_id ?? "-"] });
          return;
        }
        const [run, steps] = [await getRun(client, runId), await runSteps(client, runId)];
        const signals = await runSignals(client, runId);
        // Agent steps' runs, with their usage and tool calls (stn agent inspect shows one in full).
        const agentRuns = (await listAgentRuns(client, { workflow_run_id: runId, limit: 500 })).runs;
        render({ ...run, steps, signals, agent_runs: agentRuns }, {
          json: jsonMode(cmd),
          text: (r) => [
            ...fields([
              ["run", r.id],
              ["workflow", r.workflow_id],
              [
                "version",
                r.workflow_version === null
                  ? "one-off (a file run; --definition shows it)"
                  : String(r.workflow_version),
              ],
              ["status", r.status],
              ["created", r.created_at],
              ["completed", r.completed_at ?? "-"],
              ["trace", r.trace_id ?? "-"],
              ...(r.error ? [["error", `${r.error.code}: ${r.error.message}`] as [string, string]] : []),
              ...(r.status === "completed" ? [["result", JSON.stringify(r.result)] as [string, string]] : []),
            ]),
            "",
            ...table(
              ["STEP", "TYPE", "ATTEMPT", "STATUS", "DURATION", "ERROR"],
              r.steps.map((s) => [
                s.path,
                s.type,
                String(s.attempt),
                s.status,
                s.duration_ms === null ? "-" : formatDuration(s.duration_ms),
                s.error ? `${s.error.code}: ${s.error.message}` : s.waiting_for ?? "",
              ]),
            ),
            ...(r.signals.length === 0 ? [] : [
              "",
              ...table(
                ["SIGNAL", "NAME", "RECEIVED", "DELIVERED TO"],
                r.signals.map((
                  g,
                ) => [g.id, g.name, g.received_at, g.delivered_to ?? "(kept: no step waits yet)"]),
              ),
            ]),
            ...(r.agent_runs.length ? ["", ...agentRunTable(r.agent_runs)] : []),
          ],
        });
      });
    });

  workflow.command("logs")
    .description(
      "print a run's events (--json: one JSON object per line); -F follows until the run ends (resumable with --after)",
    )
    .argument("<run>", "run id")
    .option("-F, --follow", "keep printing new events until the run ends")
    .option("--after <seq>", "start after this event seq (or 'now')", "0")
    .action(async (runId: string, opts: { follow?: boolean; after: string }, cmd) => {
      const after = opts.after === "now" ? "now" : Number(opts.after);
      if (after !== "now" && !Number.isInteger(after)) {
        throw usageError("invalid_after", "--after takes a seq number or 'now'");
      }
      const json = jsonMode(cmd);
      await withStation(cmd, async (client) => {
        for await (const e of runEvents(client, runId, { after, follow: !!opts.follow })) {
          renderLine(e, { json, text: describeEvent });
        }
      });
    });

  for (const action of ["cancel", "pause", "resume"] as const) {
    workflow.command(action)
      .description(`${action} a run`)
      .argument("<run>", "run id")
      .action(async (runId: string, _opts, cmd) => {
        await withStation(cmd, async (client) => {
          const run = await controlRun(client, runId, action);
          render(run, { json: jsonMode(cmd), text: (r) => `${r.id} ${r.status}` });
        });
      });
  }

  const approvals = workflow.command("approvals").description("list and decide human approvals");
  approvals.command("list")
    .description("list approvals (pending by default)")
    .option("--run <run>", "only this run's approvals")
    .option("--status <status>", "pending, approved, rejected, timed_out, canceled", "pending")
    .action(async (opts: { run?: string; status: string }, cmd) => {
      await withStation(cmd, async (client) => {
        const approvals = await listApprovals(client, { run_id: opts.run, status: opts.status });
        render({ approvals }, {
          json: jsonMode(cmd),
          text: (r) =>
            table(
              ["APPROVAL", "RUN", "STEP", "STATUS", "TIMEOUT", "MESSAGE"],
              r.approvals.map((a) => [a.id, a.run_id, a.step_id, a.status, a.timeout_at, a.message]),
            ),
        });
      });
    });
  for (const verb of ["approve", "reject"] as const) {
    const decide = approvals.command(verb)
      .description(`${verb} a pending approval (a decided or timed-out approval is an error)`)
      .argument("<approval>", "approval id")
      .option("--comment <text>", "recorded with the decision")
      .option("--actor <name>", "who decides (default: $USER)");
    // Station's reject took --reason; it is the decision's comment.
    if (verb === "reject") decide.option("--reason <text>", "the same as --comment (Station's name)");
    decide.action(async (id: string, opts: { comment?: string; reason?: string; actor?: string }, cmd) => {
      await withStation(cmd, async (client) => {
        const actor = opts.actor ?? Deno.env.get("USER") ?? "cli";
        const comment = opts.comment ?? opts.reason;
        const row = await decideApproval(client, id, verb, { actor, comment });
        render(row, { json: jsonMode(cmd), text: (r) => `${r.id} ${r.status} by ${r.decided_by}` });
      });
    });
  }
}
