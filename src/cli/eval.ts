/** `stn eval run|list|show|compare|generate|datasets`: evaluations of agents and workflows (docs/evals.md). */

import type { Command } from "./command.ts";
import { basename, dirname, join } from "node:path";
import {
  compareEvalRuns,
  generateEvalDataset,
  getEval,
  listEvalDatasets,
  listEvals,
  startEval,
} from "../client/evals.ts";
import type { EvalCompare, EvalRun, StartEvalBody } from "../contract/evals.ts";
import { DATASET_FILE, parseDataset } from "../evals/dataset.ts";
import { StationError, usageError } from "../errors.ts";
import { sleep } from "../lib/async.ts";
import { commandConfig, jsonMode, withStation } from "./context.ts";
import { compareLines, evalLines, evalListLines } from "./eval_view.ts";
import { readLocalText } from "./local_files.ts";
import { fail, note, render, table } from "./output.ts";
import { moreNote, pageFlags, readPages } from "./paging.ts";

/** A whole-number flag in [min, max], or a usage error naming it. */
function intFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw usageError("invalid_usage", `--${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return Number(value);
}

/** --max-regression: a fraction in [0, 1]. */
function fractionFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) {
    throw usageError(
      "invalid_usage",
      `--max-regression must be a number from 0 to 1, got ${value}`,
      "e.g. 0.05",
    );
  }
  return n;
}

/**
 * The dataset of `--dataset`: a local file is read and sent whole; a bare name that is no local file names a
 * file of the station's environments/<env>/evals/.
 */
async function datasetOf(
  path: string,
): Promise<Pick<StartEvalBody, "dataset" | "dataset_name" | "dataset_file">> {
  const local = await Deno.stat(path).then(() => true, () => false);
  if (!local && path === basename(path) && DATASET_FILE.test(path)) return { dataset_file: path };
  const text = await readLocalText(path);
  return { dataset: parseDataset(text, path), dataset_name: basename(path) };
}

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

function datasetExists(path: string): StationError {
  return usageError("eval_dataset_exists", `${path} exists`, "name another file with -o, or remove it first");
}

/**
 * Writes a file that must not exist yet, whole or not at all: a temp file beside it is linked to its name
 * (which fails when the name exists: a dataset someone reviewed is never overwritten), then removed.
 */
async function writeNewFile(path: string, text: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  await Deno.writeTextFile(tmp, text, { createNew: true });
  try {
    await Deno.link(tmp, path);
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) throw datasetExists(path);
    throw err;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/** The gate's error: which cases got worse, by how much the scorers dropped. */
function regression(c: EvalCompare): StationError {
  const scorers = c.scorers.filter((s) => s.regressed).map((s) => `${s.scorer} ${s.delta?.toFixed(2) ?? ""}`);
  return new StationError(
    "eval_regressed",
    `regressed against ${c.base_eval_id} by more than ${c.max_regression}` +
      (scorers.length ? ` (${scorers.join(", ")})` : "") +
      (c.regressed_cases.length ? `; cases that got worse: ${c.regressed_cases.join(", ")}` : ""),
    {
      hint:
        "`stn eval compare` shows each case's scores; `stn eval show <id>` the answers and the judge's reasoning",
    },
  );
}

interface RunFlags {
  dataset: string;
  env?: string;
  kind?: "agent" | "workflow";
  concurrency?: string;
  repeat?: string;
  model?: string;
  judgeModel?: string;
  baseline?: string;
  maxRegression?: string;
  detach?: boolean;
}

function runCommand(group: Command): void {
  group.command("run")
    .description("run a dataset against an agent or workflow: each case an ordinary run, scored")
    .argument("<target>", "the agent (or workflow) to evaluate")
    .requiredOption(
      "--dataset <file>",
      "a JSONL/YAML dataset file, or the name of one in environments/<env>/evals/",
    )
    .option("--env <environment>", "the target's environment (default: workflows.environment)")
    .option("--kind <kind>", "agent or workflow (default: an agent of that name, else a workflow)")
    .option("--concurrency <n>", "cases at a time (default 4)")
    .option("--repeat <k>", "run each case k times (default 1)")
    .option("--model <model>", "run every case on this model, provider/name (agents only)")
    .option("--judge-model <model>", "the judge's model (default: the dataset's judge.model, else ai.model)")
    .option("--baseline <eval_id>", "compare with this earlier eval run when done; exit 1 when it regressed")
    .option("--max-regression <x>", "how far a score may drop below the baseline (default 0.05)")
    .option("--detach", "print the eval id and exit; the eval runs on (stn eval show <id>)")
    .addHelpText(
      "after",
      "\nExit codes: 0 the eval ran (whatever its scores), 1 it failed or regressed against --baseline, 2 a bad" +
        "\ndataset or flag. The eval runs on the station: Ctrl-C stops only the waiting (docs/evals.md).",
    )
    .action(async (target: string, opts: RunFlags, cmd) => {
      if (opts.kind && opts.kind !== "agent" && opts.kind !== "workflow") {
        throw usageError("invalid_usage", `--kind must be agent or workflow, got ${opts.kind}`);
      }
      const body: StartEvalBody = {
        target,
        kind: opts.kind,
        environment: opts.env,
        ...await datasetOf(opts.dataset),
        concurrency: intFlag("concurrency", opts.concurrency, 1, 64),
        repeat: intFlag("repeat", opts.repeat, 1, 100),
        model: opts.model,
        judge_model: opts.judgeModel,
        baseline: opts.baseline,
        max_regression: fractionFlag(opts.maxRegression),
      };
      const json = jsonMode(cmd);
      await withStation(cmd, async (client) => {
        const started = await startEval(client, body);
        note((s) => s.dim(`eval ${started.eval_id}: ${started.cases_total} case(s) of ${started.target}`));
        if (opts.detach) return render(started, { json, text: (r) => r.eval_id });
        let run = started, shown = -1;
        while (run.status === "running") {
          if (run.cases_done !== shown) {
            note((s) => s.dim(`  ${(shown = run.cases_done)}/${run.cases_total} done`));
          }
          await sleep(500);
          run = await getEval(client, started.eval_id);
        }
        run = await getEval(client, started.eval_id);
        const text = evalLines;
        if (run.status !== "completed") {
          fail(
            run,
            { json, text },
            new StationError("eval_failed", `eval ${run.eval_id} ${run.status}: ${run.error?.message ?? ""}`),
          );
        }
        if (run.baseline?.compare?.regressed) fail(run, { json, text }, regression(run.baseline.compare));
        render(run, { json, text });
      });
    });
}

function readCommands(group: Command): void {
  pageFlags(
    group.command("list")
      .description("list eval runs, newest first")
      .option("--target <name>", "only eval runs of this agent or workflow")
      .option("--status <status>", "running, completed, failed or canceled"),
    50,
  ).action(
    async (
      opts: { target?: string; status?: string; limit: string; cursor?: string; all?: boolean },
      cmd,
    ) => {
      await withStation(cmd, async (client) => {
        const page = await readPages<"evals", EvalRun>(opts, "evals", (cursor, limit) =>
          listEvals(client, {
            target: opts.target,
            status: opts.status as EvalRun["status"],
            cursor,
            limit,
          }));
        render(page, {
          json: jsonMode(cmd),
          text: (p) => {
            moreNote(p.next_cursor);
            return evalListLines(p.evals);
          },
        });
      });
    },
  );

  group.command("show")
    .description("show an eval run: aggregates per scorer, tool effectiveness, each case and its run")
    .argument("<eval_id>", "the eval run (eval_…)")
    .action(async (id: string, _opts: unknown, cmd) => {
      await withStation(
        cmd,
        async (client) => render(await getEval(client, id), { json: jsonMode(cmd), text: evalLines }),
      );
    });

  group.command("compare")
    .description(
      "compare two eval runs: per-scorer deltas and the cases that got worse (exit 1 when B regressed)",
    )
    .argument("<base>", "the earlier eval run")
    .argument("<head>", "the later eval run")
    .option("--max-regression <x>", "how far a score may drop before it counts (default 0.05)")
    .action(async (base: string, head: string, opts: { maxRegression?: string }, cmd) => {
      const max = fractionFlag(opts.maxRegression);
      await withStation(cmd, async (client) => {
        const c = await compareEvalRuns(client, base, head, max);
        const json = jsonMode(cmd);
        if (c.regressed) fail(c, { json, text: compareLines }, regression(c));
        render(c, { json, text: compareLines });
      });
    });

  group.command("datasets")
    .description("list the dataset files of an environment's evals/ folder")
    .option("--env <environment>", "the environment (default: workflows.environment)")
    .action(async (opts: { env?: string }, cmd) => {
      await withStation(cmd, async (client) => {
        render(await listEvalDatasets(client, opts.env), {
          json: jsonMode(cmd),
          text: (l) =>
            table(
              ["DATASET", "ENVIRONMENT", "CASES", "PROBLEM"],
              l.datasets.map((d) => [
                d.name,
                d.environment,
                d.cases === null ? "-" : String(d.cases),
                d.error ?? "",
              ]),
            ),
        });
      });
    });
}

function generateCommand(group: Command): void {
  group.command("generate")
    .description("have the configured model write a dataset for an agent, as a file to review before running")
    .argument("<agent>", "the agent")
    .option("--count <n>", "how many cases (default 10)")
    .option("--strategy <s>", "common, edge_cases or comprehensive (default common)")
    .option("--env <environment>", "the agent's environment (default: workflows.environment)")
    .option("--model <model>", "the model that writes the cases (default: ai.model)")
    .option(
      "-o, --output <file>",
      "where to write it (default: environments/<env>/evals/<agent>.<strategy>.jsonl)",
    )
    .action(
      async (
        agent: string,
        opts: { count?: string; strategy?: string; env?: string; model?: string; output?: string },
        cmd,
      ) => {
        const strategies = ["common", "edge_cases", "comprehensive"] as const;
        const strategy = opts.strategy ?? "common";
        if (!(strategies as readonly string[]).includes(strategy)) {
          throw usageError(
            "invalid_usage",
            `--strategy must be one of ${strategies.join(", ")}, got ${strategy}`,
          );
        }
        const config = await commandConfig(cmd);
        const environment = opts.env ?? config.values.workflows.environment;
        const path = opts.output ??
          join(config.paths.environments, environment, "evals", `${agent}.${strategy}.jsonl`);
        if (await exists(path)) throw datasetExists(path); // before the model is asked
        await withStation(cmd, async (client) => {
          const generated = await generateEvalDataset(client, {
            agent,
            environment,
            count: intFlag("count", opts.count, 1, 200),
            strategy: strategy as typeof strategies[number],
            model: opts.model,
          });
          await writeNewFile(path, generated.cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
          render({ ...generated, path }, {
            json: jsonMode(cmd),
            text: (g) => [
              `wrote ${g.cases.length} case(s) to ${g.path}` +
              (g.skipped ? ` (${g.skipped} invalid left out)` : ""),
              `review it, then: stn eval run ${agent} --dataset ${g.path}`,
            ],
          });
        });
      },
    );
}

/** Registers `stn eval`. */
export function evalCommand(program: Command): Command {
  const group = program.command("eval").description(
    "evaluate agents and workflows: datasets, scores, compare (docs/evals.md)",
  );
  runCommand(group);
  readCommands(group);
  generateCommand(group);
  return group;
}
