/**
 * EvalService (docs/evals.md#eval-runs): starts an eval run (target and dataset checked first), runs its cases
 * N at a time as ordinary agent or workflow runs, scores each and records it, compares the run with its
 * baseline at the end; at a station start it resumes the eval runs a crash left running — cases that ended
 * are not run again, a case whose run was interrupted waits for that run (which resumes from its checkpoint).
 */

import type { z } from "zod";
import type { DoublesRegistry, ToolDoubles } from "../agents/doubles.ts";
import { createModels, type Models } from "../agents/providers.ts";
import { getAgent } from "../agents/store.ts";
import type {
  EvalCompare,
  EvalDataset,
  EvalRun,
  EvalScore,
  GenerateDatasetBody,
  GeneratedDataset,
  StartEvalBody,
} from "../contract/evals.ts";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import { callCost, sumCosts } from "../telemetry/cost.ts";
import type { ModelPrice } from "../telemetry/model_price.ts";
import { mean } from "./aggregate.ts";
import { compareEvals } from "./compare.ts";
import { checkDataset, datasetDir, listDatasets, readEnvironmentDataset } from "./dataset.ts";
import { generateDataset } from "./generate.ts";
import { type CaseKey, type EvalCaseRow, EvalLedger, type EvalRunRow } from "./ledger.ts";
import { scorersOf } from "./scorers.ts";
import { scoreCase } from "./score_case.ts";
import { type CaseTarget, type EvalStation, runEvalCase } from "./target.ts";
import { evalView } from "./views.ts";

type StartBody = z.output<typeof StartEvalBody>;

/** What an EvalService is made of. */
export interface EvalServiceOptions {
  db: EvalStation["db"];
  /** The tool doubles of a dataset's `mocks` (the test runner's, handed in by the station: live for the rest). */
  toolDoubles: (mocks: NonNullable<EvalDataset["mocks"]>) => ToolDoubles;
}

/** Eval runs: start, wait, read, resume, stop. */
export class EvalService {
  readonly ledger: EvalLedger;
  #active = new Map<string, Promise<void>>();
  #stopping = false;
  #models?: Models;

  #toolDoubles: EvalServiceOptions["toolDoubles"];

  constructor(o: EvalServiceOptions) {
    this.ledger = new EvalLedger(o.db);
    this.#toolDoubles = o.toolDoubles;
  }

  #modelsOf(ctx: EvalStation): Models {
    return this.#models ??= createModels(ctx.config.values.ai, Deno.env.toObject());
  }

  /** Checks the target and the dataset, records the eval run and starts its cases. */
  async start(ctx: EvalStation, body: StartBody): Promise<EvalRun> {
    const environment = body.environment ?? ctx.config.values.workflows.environment;
    const kind = body.kind ?? (getAgent(ctx.db, environment, body.target) ? "agent" : "workflow");
    const agent = kind === "agent" ? getAgent(ctx.db, environment, body.target) : undefined;
    if (kind === "agent" ? !agent : !ctx.workflows.has(body.target)) {
      throw new StationError(
        "eval_target_not_found",
        `no ${
          kind === "agent" && body.kind ? "agent" : "agent or workflow"
        } ${body.target} in environment ${environment}`,
        {
          status: 404,
          hint:
            "`stn agent list` and `stn workflow list` show what can be evaluated; `stn sync` loads new files",
        },
      );
    }
    if (kind === "workflow" && body.model) {
      throw new StationError("invalid_request", "--model applies to agent evals only", {
        status: 400,
        hint: "a workflow's agent steps run on their agents' models",
      });
    }
    if (body.baseline && !this.ledger.get(body.baseline)) throw notFound(body.baseline);
    const dataset = body.dataset
      ? checkDataset(body.dataset, body.dataset_name ?? "dataset")
      : await readEnvironmentDataset(
        datasetDir(ctx.config.paths.environments, environment),
        body.dataset_file!,
      );
    const judgeModel = body.judge_model ?? dataset.judge?.model ?? null;
    if (scorersOf(dataset, agent?.output_schema !== undefined).includes("judge")) {
      this.#modelsOf(ctx).resolve(judgeModel ?? undefined); // a missing key fails now, not in every case
    }
    const row = this.ledger.create({
      kind,
      target: body.target,
      environment,
      dataset,
      datasetName: dataset.name ?? body.dataset_file ?? "dataset",
      datasetPath: body.dataset_file ?? null,
      model: body.model ?? null,
      judgeModel,
      concurrency: body.concurrency,
      repeat: body.repeat,
      baseline: body.baseline ?? null,
      maxRegression: body.max_regression,
    });
    this.#launch(ctx, row.id);
    return this.view(row.id, false);
  }

  /**
   * Before the agent runs resume (AgentService.resumeOrphans): the dataset mocks of the cases whose runs a crash
   * interrupted, registered again under those runs, so a resumed run's tools are doubled as before.
   */
  restoreDoubles(registry: DoublesRegistry): void {
    for (const id of this.ledger.running()) {
      const dataset = JSON.parse(this.ledger.get(id)!.dataset) as EvalDataset;
      if (!dataset.mocks) continue;
      const tools = this.#toolDoubles(dataset.mocks);
      for (const c of this.ledger.cases(id)) {
        if (c.status === "running" && c.run_id) registry.register(c.run_id, { tools });
      }
    }
  }

  /** Resumes the eval runs a crash or a stop left running. */
  resume(ctx: EvalStation): void {
    for (const id of this.ledger.running()) if (!this.#active.has(id)) this.#launch(ctx, id);
  }

  /** Stops driving eval runs (their cases' runs stop with the agent service): they resume at the next start. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled(this.#active.values());
  }

  /** An eval run as the API shows it. */
  view(id: string, withCases = true): EvalRun {
    const row = this.ledger.get(id);
    if (!row) throw notFound(id);
    return evalView(row, this.ledger.cases(id), withCases);
  }

  /** Compares eval run `head` with `base` (both must exist; running ones compare their ended cases). */
  compare(base: string, head: string, maxRegression: number): EvalCompare {
    const b = this.view(base), h = this.view(head);
    return compareEvals({ ...b, cases: b.cases! }, { ...h, cases: h.cases! }, maxRegression);
  }

  /** The dataset files of an environment's evals/ folder. */
  async datasets(ctx: EvalStation, environment?: string) {
    const env = environment ?? ctx.config.values.workflows.environment;
    const files = await listDatasets(datasetDir(ctx.config.paths.environments, env));
    return files.map((f) => ({ ...f, environment: env }));
  }

  /** Has the model write a dataset for an agent (returned for review, not saved). */
  async generate(ctx: EvalStation, body: z.output<typeof GenerateDatasetBody>): Promise<GeneratedDataset> {
    const environment = body.environment ?? ctx.config.values.workflows.environment;
    const def = getAgent(ctx.db, environment, body.agent);
    if (!def) {
      throw new StationError("agent_not_found", `no agent ${body.agent} in environment ${environment}`, {
        hint: "`stn agent list` shows the agents; `stn sync` loads new .prompt files",
      });
    }
    return await generateDataset(this.#modelsOf(ctx), def, body);
  }

  /** The end of an eval run (at once when it has ended). */
  async wait(id: string, signal?: AbortSignal): Promise<EvalRun> {
    for (;;) {
      const active = this.#active.get(id);
      if (active) await active;
      const row = this.ledger.get(id);
      if (!row) throw notFound(id);
      if (row.status !== "running" || signal?.aborted || this.#stopping) return this.view(id);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  #launch(ctx: EvalStation, id: string): void {
    const done = this.#drive(ctx, id).catch((err) => {
      if (this.#stopping) return;
      log.error("an eval run failed", { eval: id, error: errorMessage(err) });
      const e = err instanceof StationError ? err : undefined;
      this.ledger.finish(id, {
        status: "failed",
        error: { code: e?.code ?? "internal_error", message: errorMessage(err) },
      });
    }).finally(() => this.#active.delete(id));
    this.#active.set(id, done);
  }

  async #drive(ctx: EvalStation, id: string): Promise<void> {
    const row = this.ledger.get(id)!;
    const dataset = JSON.parse(row.dataset) as EvalDataset;
    const target: CaseTarget = {
      ctx,
      ledger: this.ledger,
      kind: row.kind,
      target: row.target,
      environment: row.environment,
      model: row.model ?? undefined,
      maxCost: dataset.max_cost,
      doubles: dataset.mocks ? { tools: this.#toolDoubles(dataset.mocks) } : undefined,
    };
    const todo = this.ledger.cases(id).filter((c) => c.status === "pending" || c.status === "running");
    // Cases whose runs a crash interrupted first: their runs are already going again.
    todo.sort((a, b) => Number(b.run_id !== null) - Number(a.run_id !== null));
    let next = 0;
    const worker = async () => {
      while (!this.#stopping && next < todo.length) await this.#case(row, dataset, target, todo[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(row.concurrency, todo.length) }, worker));
    if (this.#stopping) return;
    const base = row.baseline_eval_id;
    this.ledger.finish(id, {
      status: "completed",
      compare: base ? this.compare(base, id, row.max_regression) : undefined,
    });
  }

  async #case(
    row: EvalRunRow,
    dataset: EvalDataset,
    target: CaseTarget,
    c: EvalCaseRow,
  ): Promise<void> {
    const { ctx } = target;
    const key: CaseKey = { evalId: row.id, idx: c.idx, repeat: c.repeat };
    const input = dataset.cases[c.idx];
    let observed;
    try {
      observed = await runEvalCase(target, key, input, c.run_id);
    } catch (err) {
      if (this.#stopping || ctx.shutdown.aborted) return;
      const e = err instanceof StationError ? err : undefined;
      this.ledger.finishCase(key, {
        status: "error",
        answer: null,
        result: undefined,
        error: { code: e?.code ?? "internal_error", message: errorMessage(err) },
        scores: [],
        score: null,
        totalTokens: 0,
        judgeTokens: 0,
        costUsd: null,
        durationMs: null,
        toolCalls: [],
      });
      return;
    }
    // A run the station's stop interrupted is not an answer: the case goes on at the next start.
    if (this.#stopping || ctx.shutdown.aborted) return;
    const judge = {
      models: this.#modelsOf(ctx),
      model: row.judge_model ?? undefined,
      dataset,
      signal: ctx.shutdown,
      prices: ctx.config.values.ai.prices,
    };
    const scores = await scoreCase(judge, input, observed);
    if (this.#stopping || ctx.shutdown.aborted) return;
    const failed = !observed.completed || scores.some((s) => s.error);
    this.ledger.finishCase(key, {
      status: failed ? "error" : scores.every((s) => s.passed) ? "passed" : "failed",
      answer: observed.answer,
      result: observed.result,
      error: observed.error,
      scores,
      score: mean(scores.flatMap((s) => s.score ?? [])),
      totalTokens: observed.totalTokens,
      judgeTokens: scores.reduce((n, s) => n + (s.judge?.total_tokens ?? 0), 0),
      costUsd: caseCost(observed.costUsd, scores, ctx.config.values.ai.prices),
      durationMs: observed.durationMs,
      toolCalls: observed.toolCalls.map((t) => ({ name: t.name, status: t.status, error: t.error })),
    });
  }
}

/** What a case cost: its run's model calls and its judge calls; null when one of their models has no price. */
function caseCost(
  run: number | null,
  scores: EvalScore[],
  prices: Record<string, ModelPrice>,
): number | null {
  return sumCosts([run, ...scores.flatMap((s) => s.judge ? [callCost(s.judge, prices)] : [])]);
}

function notFound(id: string): StationError {
  return new StationError("eval_not_found", `no eval run ${id}`, {
    status: 404,
    hint: "`stn eval list` shows the eval runs",
  });
}
