/** `stn workflow runs|inspect|logs|cancel|pause|resume|approvals`: workflow runs from the CLI. */

import type { Command } from "./command.ts";
import {
  controlRun,
  decideApproval,
  getRun,
  listApprovals,
  listRuns,
  runEvents,
  runSteps,
} from "../client/workflow_runs.ts";
import { usageError } from "../errors.ts";
import { formatDuration } from "../lib/duration.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { formatUsd } from "../telemetry/cost.ts";
import type { Run as RunView, RunEvent } from "../contract/runs.ts";
import { jsonMode, withStation } from "./context.ts";
import { fields, render, renderLine, type Style, table } from "./output.ts";
import { pageFlags, readPages } from "./paging.ts";
import { showRuns, watchFlag } from "./watch.ts";

/** One event as a log line, styled for the stream it goes to. */
export function describeEvent(e: RunEvent, style: Style): string {
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

/** Adds runs, inspect, logs, cancel/pause/resume and approvals to the `workflow` command group. */
export function workflowRunCommands(workflow: Command): void {
  const runRow = (r: RunView) => [r.run_id, r.workflow_id, r.status, r.created_at, r.error?.message ?? ""];
  const RUN_HEADER = ["RUN", "WORKFLOW", "STATUS", "CREATED", "ERROR"];
  watchFlag(pageFlags(
    workflow.command("runs")
      .description("list runs, newest first (one page; --cursor for the next, --all for every page)")
      .option("--workflow <id>", "only runs of this workflow")
      .option("--status <status>", "only runs with this status"),
    20,
  )).action(
    async (
      opts: {
        workflow?: string;
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
          readPages<"runs", RunView>(
            opts,
            "runs",
            (cursor, limit) =>
              listRuns(client, { workflow_id: opts.workflow, status: opts.status, limit, cursor }),
          );
        await showRuns(cmd, { watch: opts.watch, read, header: RUN_HEADER, row: runRow });
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
          const { yamlText } = await lazyImport<typeof import("../lib/yaml.ts")>(
            "../lib/yaml.ts",
            import.meta.url,
          );
          render(definition, { json: jsonMode(cmd), text: (d) => yamlText(d).trimEnd() });
          return;
        }
        if (opts.trace) {
          const { trace_id } = await getRun(client, runId);
          render({ run: runId, trace_id }, { json: jsonMode(cmd), text: (r) => [r.trace_id ?? "-"] });
          return;
        }
        // The signals' and agent runs' modules load here, not for every command of the `workflow` group
        // (docs/benchmarks.md, client commands).
        const [{ runSignals }, { listAgentRuns }, { agentRunTable }] = await Promise.all([
          lazyImport<typeof import("../client/events.ts")>("../client/events.ts", import.meta.url),
          lazyImport<typeof import("../client/agent_runs.ts")>("../client/agent_runs.ts", import.meta.url),
          lazyImport<typeof import("./agent_runs.ts")>("./agent_runs.ts", import.meta.url),
        ]);
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
              ...(r.parent_run_id
                ? [["forked from", `${r.parent_run_id} at ${r.forked_from}`] as [string, string]]
                : []),
              ...(r.forks?.length ? [["forks", r.forks.join(", ")] as [string, string]] : []),
              ["created", r.created_at],
              ["completed", r.completed_at ?? "-"],
              ["trace", r.trace_id ?? "-"],
              ...(r.agent_runs.length ? [["cost", formatUsd(r.cost_usd)] as [string, string]] : []),
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
                s.reused ? `${s.status} (reused from ${s.reused_from?.run_id ?? "the parent"})` : s.status,
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
