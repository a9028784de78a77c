/** `stn workflow run` and its shortcut `stn run`: start a run of a stored workflow or a definition file. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { getRunCassette, startRun, waitForRun } from "../client/workflow_runs.ts";
import type { Run as RunView } from "../contract/runs.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { parseDuration } from "../lib/duration.ts";
import { jsonMode, withStation } from "./context.ts";
import { idempotencyKeyFlag, priorityFlag } from "./flags.ts";
import { readLocalText } from "./local_files.ts";
import { errStyle, note, render } from "./output.ts";
import { RECORD_HELP, recordTarget, saveRecording } from "./record.ts";
import { describeEvent } from "./runs.ts";
import { issueLines, versionFlag } from "./workflow.ts";

/** Exit codes of `workflow run --wait` (docs/design/errors.md#exit-codes). */
const EXIT = { failed: 3, canceled: 4, timeout: 5 } as const;

/** Reads --input: inline JSON, `@file`, or `-` for stdin. */
export async function readInput(raw: string | undefined): Promise<Record<string, unknown>> {
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
export async function definitionFromFile(path: string): Promise<unknown> {
  // The file is read while the checker's modules load (an async read waits for a thread of its own).
  const [{ validateSource }, text] = await Promise.all([
    lazyImport<typeof import("../workflows/definition/load.ts")>(
      "../workflows/definition/load.ts",
      import.meta.url,
    ),
    readLocalText(path),
  ]);
  const result = validateSource(text, { fileName: path });
  if (!result.valid) {
    note((style) => result.errors.flatMap((e) => issueLines(path, e, "error", style)));
    throw usageError("invalid_definition", `${path} is not a valid workflow definition`, undefined, {
      file: path,
      errors: result.errors,
    });
  }
  return result.definition;
}

/** Shows a finished run: its result on stdout (the whole run with --json), or fails with exit 3 or 4. */
export function finish(run: RunView, json: boolean): void {
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

/** Adds `run` to a command group: `stn workflow run`, and on the program itself `stn run` (the same command). */
export function runCommand(parent: Command): void {
  parent.command("run")
    .description(
      (parent.parent ? "" : "shortcut for `stn workflow run`: ") +
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
        }, {
          // Embedded, a file's run (not stored, not recorded) is all the command does: a lean station may do.
          oneShot: "definition" in body && !opts.save && !recordTo
            ? { definition: body.definition }
            : undefined,
        });
      },
    );
}
