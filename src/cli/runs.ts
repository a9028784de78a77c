import type { Command } from "commander";
import type { StationClient } from "../client/http.ts";
import {
  controlRun,
  decideApproval,
  getRun,
  listApprovals,
  listRuns,
  runEvents,
  runSteps,
  startRun,
} from "../client/workflow_runs.ts";
import { StationError, usageError } from "../errors.ts";
import type { RunEvent } from "../events/run_events.ts";
import { formatDuration, parseDuration } from "../lib/duration.ts";
import { loadWorkflowFile, WORKFLOW_FILE } from "../workflows/definition/load.ts";
import type { Run as RunView } from "../contract/runs.ts";
import { globals, withStation } from "./context.ts";
import { CliExit, printFields, printJson, printTable, style } from "./output.ts";

/** Exit codes of `workflow run --wait` (DESIGN §6). */
const EXIT = { failed: 3, canceled: 4, timeout: 5 } as const;

/** Reads --input: inline JSON, `@file`, or `-` for stdin. */
async function readInput(raw: string | undefined): Promise<Record<string, unknown>> {
  if (raw === undefined) return {};
  let text = raw;
  if (raw === "-") text = await new Response(Deno.stdin.readable).text();
  else if (raw.startsWith("@")) {
    try {
      text = await Deno.readTextFile(raw.slice(1));
    } catch (err) {
      throw usageError("input_unreadable", `cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(
      "input_invalid_json",
      `--input is not valid JSON: ${(err as Error).message}`,
      `e.g. --input '{"n": 3}'`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw usageError("input_not_object", "--input must be a JSON object", `e.g. --input '{"n": 3}'`);
  }
  return value as Record<string, unknown>;
}

function looksLikeFile(target: string): boolean {
  return WORKFLOW_FILE.test(target) || /\.(ya?ml|json)$/.test(target) || target.includes("/");
}

/** Loads a definition file for `run`, printing each validation problem like `stn workflow validate`. */
async function definitionFromFile(path: string): Promise<unknown> {
  const result = await loadWorkflowFile(path);
  if (!result.valid) {
    for (const e of result.errors) {
      const at = e.line ? `${path}:${e.line}${e.column ? `:${e.column}` : ""}` : path;
      console.error(`${at}: ${e.code} ${e.path}: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ""}`);
    }
    throw usageError("invalid_definition", `${path} is not a valid workflow definition`);
  }
  return result.definition;
}

function describeEvent(e: RunEvent): string {
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

/** Waits for the run's end by following its event stream; null when the timeout passes first. */
async function waitForRun(
  client: StationClient,
  runId: string,
  timeoutMs: number | undefined,
  onEvent?: (e: RunEvent) => void,
): Promise<RunView | null> {
  const signal = timeoutMs !== undefined ? AbortSignal.timeout(timeoutMs) : undefined;
  let after = 0;
  // A dropped connection resumes from the last seq seen (Last-Event-ID semantics).
  for (;;) {
    try {
      for await (const e of runEvents(client, runId, { after, signal })) {
        after = e.seq;
        onEvent?.(e);
      }
      const run = await getRun(client, runId);
      if (["completed", "failed", "canceled"].includes(run.status)) return run;
    } catch (err) {
      if (signal?.aborted) return null;
      if (err instanceof StationError) throw err;
    }
  }
}

function finish(run: RunView, json: boolean): void {
  if (json) printJson(run);
  else if (run.status === "completed") printJson(run.result);
  else {console.error(
      `${style.red(`run ${run.id} ${run.status}`)}${run.error ? `: ${run.error.message}` : ""}`,
    );}
  if (run.status === "failed") throw new CliExit(EXIT.failed);
  if (run.status === "canceled") throw new CliExit(EXIT.canceled);
}

/** Adds run, runs, inspect, logs, cancel/pause/resume and approvals to the `workflow` command group. */
export function workflowRunCommands(workflow: Command): void {
  workflow.command("run")
    .description("start a run of a stored workflow (by id) or of a definition file; --wait for its result")
    .argument("<workflow>", "workflow id, or a path to a .workflow.yaml|yml|json file")
    .option("--input <json>", "run input: a JSON object, @file.json, or - for stdin")
    .option("--wait", "wait for the run to end; exit 3 failed, 4 canceled, 5 wait timed out")
    .option("--follow", "print the run's events on stderr while waiting (implies --wait)")
    .option("--timeout <duration>", "with --wait: give up waiting after this long (exit 5), e.g. 10m")
    .addHelpText(
      "after",
      "\nIn embedded mode (no server running) run always waits: the runtime stops when the command ends.",
    )
    .action(
      async (
        target: string,
        opts: { input?: string; wait?: boolean; follow?: boolean; timeout?: string },
        cmd,
      ) => {
        const input = await readInput(opts.input);
        const timeoutMs = opts.timeout !== undefined ? parseDuration(opts.timeout) : undefined;
        if (timeoutMs === null) {
          throw usageError(
            "invalid_duration",
            `--timeout ${opts.timeout} is not a duration`,
            'e.g. "30s", "10m"',
          );
        }
        const body = looksLikeFile(target)
          ? { definition: await definitionFromFile(target), input, trigger: "manual" as const }
          : { workflowId: target, input, trigger: "manual" as const };
        const json = !!globals(cmd).json;
        await withStation(cmd, async (client, where) => {
          const run = await startRun(client, body);
          const wait = opts.wait || opts.follow || where.source === "embedded";
          if (!wait) {
            if (json) printJson(run);
            else console.log(run.id);
            return;
          }
          console.error(style.dim(`run ${run.id} started`));
          const done = await waitForRun(
            client,
            run.id,
            timeoutMs,
            opts.follow ? (e) => console.error(describeEvent(e)) : undefined,
          );
          if (!done) {
            console.error(
              `${
                style.yellow("timed out")
              } waiting for run ${run.id}; it keeps running (stn workflow inspect ${run.id})`,
            );
            throw new CliExit(EXIT.timeout);
          }
          finish(done, json);
        });
      },
    );

  workflow.command("runs")
    .description("list runs, newest first")
    .option("--workflow <id>", "only runs of this workflow")
    .option("--status <status>", "only runs with this status")
    .option("--limit <n>", "how many", "20")
    .action(async (opts: { workflow?: string; status?: string; limit: string }, cmd) => {
      await withStation(cmd, async (client) => {
        const page = await listRuns(client, {
          workflow_id: opts.workflow,
          status: opts.status,
          limit: Number(opts.limit),
        });
        if (globals(cmd).json) return printJson(page);
        printTable(
          ["RUN", "WORKFLOW", "STATUS", "CREATED", "ERROR"],
          page.runs.map((r) => [r.id, r.workflow_id, r.status, r.created_at, r.error?.message ?? ""]),
        );
      });
    });

  workflow.command("inspect")
    .description("show a run and its steps: status, attempts, durations, errors")
    .argument("<run>", "run id")
    .action(async (runId: string, _opts, cmd) => {
      await withStation(cmd, async (client) => {
        const [run, steps] = [await getRun(client, runId), await runSteps(client, runId)];
        if (globals(cmd).json) return printJson({ ...run, steps });
        printFields([
          ["run", run.id],
          ["workflow", run.workflow_id],
          ["status", run.status],
          ["created", run.created_at],
          ["completed", run.completed_at ?? "-"],
          ...(run.error ? [["error", `${run.error.code}: ${run.error.message}`] as [string, string]] : []),
          ...(run.status === "completed" ? [["result", JSON.stringify(run.result)] as [string, string]] : []),
        ]);
        console.log("");
        printTable(
          ["STEP", "TYPE", "ATTEMPT", "STATUS", "DURATION", "ERROR"],
          steps.map((s) => [
            s.path,
            s.type,
            String(s.attempt),
            s.status,
            s.duration_ms === null ? "-" : formatDuration(s.duration_ms),
            s.error ? `${s.error.code}: ${s.error.message}` : "",
          ]),
        );
      });
    });

  workflow.command("logs")
    .description("print a run's events; -f follows until the run ends (resumable with --after)")
    .argument("<run>", "run id")
    .option("-f, --follow", "keep printing new events until the run ends")
    .option("--after <seq>", "start after this event seq (or 'now')", "0")
    .action(async (runId: string, opts: { follow?: boolean; after: string }, cmd) => {
      const after = opts.after === "now" ? "now" : Number(opts.after);
      if (after !== "now" && !Number.isInteger(after)) {
        throw usageError("invalid_after", "--after takes a seq number or 'now'");
      }
      await withStation(cmd, async (client) => {
        for await (const e of runEvents(client, runId, { after, follow: !!opts.follow })) {
          console.log(globals(cmd).json ? JSON.stringify(e) : describeEvent(e));
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
          if (globals(cmd).json) printJson(run);
          else console.log(`${run.id} ${run.status}`);
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
        const rows = await listApprovals(client, { run_id: opts.run, status: opts.status });
        if (globals(cmd).json) return printJson(rows);
        printTable(
          ["APPROVAL", "RUN", "STEP", "STATUS", "TIMEOUT", "MESSAGE"],
          rows.map((a) => [a.id, a.run_id, a.step_id, a.status, a.timeout_at, a.message]),
        );
      });
    });
  for (const verb of ["approve", "reject"] as const) {
    approvals.command(verb)
      .description(`${verb} a pending approval (a decided or timed-out approval is an error)`)
      .argument("<approval>", "approval id")
      .option("--comment <text>", "recorded with the decision")
      .option("--actor <name>", "who decides (default: $USER)")
      .action(async (id: string, opts: { comment?: string; actor?: string }, cmd) => {
        await withStation(cmd, async (client) => {
          const actor = opts.actor ?? Deno.env.get("USER") ?? "cli";
          const row = await decideApproval(client, id, verb, { actor, comment: opts.comment });
          if (globals(cmd).json) printJson(row);
          else console.log(`${row.id} ${row.status} by ${row.decided_by}`);
        });
      });
  }
}
