/** `stn workflow retry|fork|eval` (alias `debug-expression`): repairing runs from the CLI. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { bulkRetryRuns, evalInRun, forkRun, retryRun, waitForRun } from "../client/workflow_runs.ts";
import type { StationClient } from "../client/http.ts";
import type { Run } from "../contract/runs.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { jsonMode, withStation } from "./context.ts";
import { readLocalText } from "./local_files.ts";
import { note, render, table } from "./output.ts";
import { definitionFromFile, finish, readInput } from "./run.ts";

/** --version N as a number, or a usage error. */
function versionFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw usageError("invalid_version", `--version ${raw} is not a version number`);
  }
  return n;
}

/** The definition flags of retry and fork: a stored version or a file (not both). */
async function definitionFlags(opts: { version?: string; file?: string }) {
  if (opts.version !== undefined && opts.file !== undefined) {
    throw usageError("invalid_request", "give --version or a definition file, not both");
  }
  return {
    version: versionFlag(opts.version),
    definition: opts.file === undefined ? undefined : await definitionFromFile(opts.file),
  };
}

/** Prints a retried or forked run, or waits for its end as `workflow run --wait` does. */
async function answer(
  client: StationClient,
  run: Run,
  opts: { wait?: boolean; json: boolean; verb: string },
) {
  if (!opts.wait) return render(run, { json: opts.json, text: (r) => `${r.id} ${r.status}` });
  note((style) => style.dim(`run ${run.id} ${opts.verb}`));
  finish((await waitForRun(client, run.id))!, opts.json);
}

type RetryOpts = {
  fromDefinition?: string;
  version?: string;
  wait?: boolean;
  failed?: boolean;
  canceled?: boolean;
  workflow?: string;
  since?: string;
  errorCode?: string;
  dryRun?: boolean;
  yes?: boolean;
};

async function bulk(cmd: Command, opts: RetryOpts): Promise<void> {
  if (!opts.workflow || !opts.since) {
    throw usageError(
      "invalid_request",
      "a bulk retry needs --workflow NAME and --since DURATION",
      "e.g. --since 1h",
    );
  }
  const json = jsonMode(cmd);
  const filter = {
    workflow_id: opts.workflow,
    since: opts.since,
    status: opts.canceled ? "canceled" as const : "failed" as const,
    error_code: opts.errorCode,
    version: versionFlag(opts.version),
  };
  const show = (r: Awaited<ReturnType<typeof bulkRetryRuns>>) => [
    ...table(
      ["RUN", "ERROR", "ENDED", "OUTCOME", "REASON"],
      r.runs.map((x) => [x.run_id, x.error_code ?? "", x.ended_at ?? "", x.outcome, x.reason ?? ""]),
    ),
    r.dry_run
      ? `${r.runs.filter((x) => x.outcome === "would_retry").length} run(s) would be retried`
      : `${r.retried} run(s) retried`,
  ];
  await withStation(cmd, async (client) => {
    const listed = await bulkRetryRuns(client, { ...filter, dry_run: true });
    const todo = listed.runs.filter((x) => x.outcome === "would_retry").length;
    if (opts.dryRun || todo === 0) return render(listed, { json, text: show });
    if (!opts.yes) {
      if (json || !Deno.stdin.isTerminal()) {
        throw usageError(
          "confirmation_required",
          `refusing to retry ${todo} run(s) without confirmation`,
          "pass --yes",
        );
      }
      note(show(listed));
      const reply = prompt(`Retry these ${todo} run(s)? [y/N]`);
      if (!/^y(es)?$/i.test(reply?.trim() ?? "")) {
        return render({ ...listed, retried: 0 }, {
          json,
          text: () => "Not retried.",
        });
      }
    }
    render(await bulkRetryRuns(client, { ...filter, dry_run: false }), { json, text: show });
  });
}

/** Reads `eval --input`: any JSON value, `@file`, or `-` for stdin. */
async function readData(raw: string): Promise<unknown> {
  const text = raw === "-"
    ? await readLocalText("-")
    : raw.startsWith("@")
    ? await readLocalText(raw.slice(1))
    : raw;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(
      "input_invalid_json",
      `--input is not valid JSON: ${errorMessage(err)}`,
      `e.g. --input '{"n": 3}'`,
    );
  }
}

/** Points at an expression error's position under the expression (stderr). */
function showPosition(expression: string, err: unknown): void {
  const position = err instanceof StationError
    ? (err.details as { position?: unknown } | undefined)?.position
    : undefined;
  if (typeof position !== "number") return;
  note((style) => [`  ${expression}`, `  ${" ".repeat(Math.max(0, position))}${style.red("^")}`]);
}

/** Adds retry, fork and eval (alias debug-expression) to the `workflow` command group. */
export function workflowRerunCommands(workflow: Command): void {
  workflow.command("retry")
    .description(
      "retry a failed or canceled run from the step it stopped at (the same run goes on), or --failed runs in bulk",
    )
    .argument("[run]", "run id (omit with --failed)")
    .option("--from-definition <file>", "go on with this definition file (fixed)")
    .option("--version <n>", "go on with this stored version of the workflow")
    .option("--wait", "wait for the run to end; exit 3 failed, 4 canceled")
    .option("--failed", "bulk: retry every failed run of --workflow that ended within --since")
    .option("--canceled", "bulk: retry canceled runs instead of failed ones")
    .option("--workflow <id>", "bulk: the workflow whose runs to retry")
    .option("--since <duration>", "bulk: runs that ended within this long, e.g. 1h")
    .option("--error-code <code>", "bulk: only runs whose error has this code")
    .option("--dry-run", "bulk: list the runs it would retry, retry nothing")
    .option("-y, --yes", "bulk: do not ask for confirmation (needed when not on a terminal)")
    .addHelpText(
      "after",
      "\nCompleted steps are not run again (no model call, no sandbox, no approval): the step the run stopped" +
        "\nat (a foreach/parallel/try block as a whole) and what follows run with the definition given, else" +
        "\nthe workflow's latest stored version, else the run's own. A definition that drops a completed step or" +
        "\nchanges its type is refused (definition_incompatible). A bulk retry retries each run once: runs" +
        "\nalready retried within --since are skipped, so running it again retries only the rest." +
        "\nTo run completed steps again, fork instead (`stn workflow fork RUN --from STEP`; docs/workflows.md).",
    )
    .action(async (runId: string | undefined, opts: RetryOpts, cmd: Command) => {
      if (opts.failed || opts.canceled) {
        if (runId !== undefined) throw usageError("invalid_request", "give a run id or --failed, not both");
        return await bulk(cmd, opts);
      }
      if (runId === undefined) {
        throw usageError("invalid_request", "give the run to retry, or --failed --workflow NAME --since 1h");
      }
      const body = await definitionFlags({ version: opts.version, file: opts.fromDefinition });
      await withStation(cmd, async (client, where) => {
        const run = await retryRun(client, runId, body);
        // Embedded, the runtime stops with the command: wait as `workflow run` does.
        const wait = opts.wait || where.source === "embedded";
        await answer(client, run, { wait, json: jsonMode(cmd), verb: "retried" });
      });
    });

  workflow.command("fork")
    .description("start a new run from a step of a run, reusing the outputs of the steps before it")
    .argument("<run>", "the run to fork")
    .requiredOption("--from <step>", "the step to resume at (a step inside a block: the whole block re-runs)")
    .option("--input <json>", "the fork's input: a JSON object, @file.json, or - (default: the parent's)")
    .option("--version <n>", "run this stored version of the workflow")
    .option("--file <file>", "run this definition file")
    .option("--wait", "wait for the run to end; exit 3 failed, 4 canceled")
    .addHelpText(
      "after",
      "\nThe steps the parent completed before --from are copied as completed with their recorded output" +
        "\n(shown as reused; never executed again: no model call, no sandbox, no approval); the rest runs." +
        "\nThe new run links to its parent (inspect shows parent_run_id).",
    )
    .action(
      async (
        runId: string,
        opts: { from: string; input?: string; version?: string; file?: string; wait?: boolean },
        cmd: Command,
      ) => {
        const body = {
          from: opts.from,
          ...(opts.input !== undefined ? { input: await readInput(opts.input) } : {}),
          ...(await definitionFlags(opts)),
        };
        await withStation(cmd, async (client, where) => {
          const run = await forkRun(client, runId, body);
          const wait = opts.wait || where.source === "embedded";
          await answer(client, run, { wait, json: jsonMode(cmd), verb: "forked" });
        });
      },
    );

  workflow.command("eval")
    .alias("debug-expression")
    .description("evaluate a JSONata expression against the data a step of a run saw (or --input)")
    .argument("<expression>", "the expression, as a transform step would run it")
    .option("--run <run>", "the run whose data to use")
    .option("--step <step>", "the data this step saw (default: the run's data now)")
    .option("--input <json>", "evaluate against this JSON instead (@file or - for stdin)")
    .addHelpText("after", "\nPrints the value as JSON; a syntax error prints its position (exit 1).")
    .action(
      async (expression: string, opts: { run?: string; step?: string; input?: string }, cmd: Command) => {
        const input = opts.input === undefined ? undefined : await readData(opts.input);
        if (opts.run === undefined && input === undefined) {
          throw usageError("invalid_request", "give --run RUN (and --step STEP) or --input JSON");
        }
        try {
          let value: unknown;
          if (opts.run === undefined) {
            const { contextScope, evaluate } = await lazyImport<typeof import("../workflows/expr.ts")>(
              "../workflows/expr.ts",
              import.meta.url,
            );
            const scope = input !== null && typeof input === "object" && !Array.isArray(input)
              ? contextScope(input as Record<string, unknown>)
              : { data: input, bindings: {} };
            value = (await evaluate(expression, scope.data, scope.bindings)) ?? null;
          } else {
            const runId = opts.run;
            value = await withStation(
              cmd,
              async (client) =>
                (await evalInRun(client, runId, { expression, step: opts.step, input })).value,
            );
          }
          render({ value }, {
            json: jsonMode(cmd),
            text: (r) => JSON.stringify(r.value, null, 2),
          });
        } catch (err) {
          showPosition(expression, err);
          throw err;
        }
      },
    );
}
