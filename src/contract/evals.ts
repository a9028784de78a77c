/**
 * The contract of evaluations (docs/evals.md): a dataset's cases and settings, an eval run and its case
 * results with their scores, the aggregates per scorer and per tool, the comparison of two eval runs, and the
 * requests of the evals API (start, generate a dataset, compare).
 */

import { z } from "zod";
import { ToolMock } from "./tests.ts";

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/);

/** How a case's answer is matched: a value to equal, or a JSONata expression / substring it must satisfy. */
export const EvalExpected = z.union([
  z.strictObject({
    jsonata: z.string().min(1).describe(
      "JSONata over {answer, result, vars, tool_calls}: true (or a number in 0–1) scores the case",
    ),
  }),
  z.strictObject({ contains: z.string().min(1).describe("the answer must contain this text") }),
  z.unknown().describe("a value: a string must equal the trimmed answer, anything else the parsed result"),
]).meta({ id: "EvalExpected" });

/** What a case's tool calls must show (the `tools` scorer). */
export const EvalToolExpectations = z.strictObject({
  required: z.array(z.string().min(1)).optional().describe("tools that must be called at least once"),
  forbidden: z.array(z.string().min(1)).optional().describe("tools that must not be called"),
  min_calls: z.int().min(0).optional().describe("at least this many tool calls in all"),
  max_calls: z.int().min(0).optional().describe("at most this many tool calls in all"),
}).meta({ id: "EvalToolExpectations" });
export type EvalToolExpectations = z.infer<typeof EvalToolExpectations>;

/** The settings of the judge (LLM-as-judge scorer). */
export const EvalJudge = z.strictObject({
  model: z.string().min(1).optional().describe("provider/name of the judge model (default: ai.model)"),
  rubric: z.string().min(1).optional().describe("the rubric of every case that has none of its own"),
  pass_score: z.number().min(0).max(1).default(0.7).describe("a judge score at or above this passes"),
}).meta({ id: "EvalJudge" });

/** One case of a dataset (a JSONL line, or an item of a YAML dataset's `cases`). */
export const EvalCaseInput = z.strictObject({
  id: z.string().min(1).optional().describe("the case's id, stable across runs (default: case-<line>)"),
  task: z.string().min(1).optional().describe("the agent's task (for a workflow: ignored unless no input)"),
  input: z.unknown().optional().describe(
    "a workflow's input; for an agent, the task when `task` is absent (a string, or JSON of a value)",
  ),
  vars: z.record(z.string(), z.unknown()).optional().describe("the agent's input variables"),
  expected: EvalExpected.optional(),
  rubric: z.string().min(1).optional().describe("what the judge scores this case's answer against"),
  tools: EvalToolExpectations.optional(),
  max_latency_ms: z.int().min(1).optional().describe("the `latency` scorer passes at or under this"),
  max_tokens: z.int().min(1).optional().describe("the `tokens` scorer passes at or under this"),
}).refine((c) => c.task !== undefined || c.input !== undefined, { message: "a case needs task or input" })
  .meta({ id: "EvalCaseInput" });
export type EvalCaseInput = z.infer<typeof EvalCaseInput>;

/** The scorers stn has; a dataset's `scorers` picks some (default: those its cases give data for). */
export const EvalScorerName = z.enum(["expected", "schema", "tools", "latency", "tokens", "judge"]);
export type EvalScorerName = z.infer<typeof EvalScorerName>;

/** A dataset: its cases and the settings every case shares (a YAML/JSON file; a JSONL file is cases only). */
export const EvalDataset = z.strictObject({
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  scorers: z.array(EvalScorerName).min(1).optional().describe(
    "the scorers to run (default: expected where a case has `expected`, schema for an agent with an output " +
      "schema, tools where a case has `tools`, judge where a case has a rubric, latency and tokens always)",
  ),
  judge: EvalJudge.optional(),
  tools: EvalToolExpectations.optional().describe("tool expectations of every case that has none of its own"),
  max_latency_ms: z.int().min(1).optional(),
  max_tokens: z.int().min(1).optional(),
  max_cost: z.number().positive().optional().describe(
    "a budget in USD for each case's agent run (with the agent's own max_cost the lower holds): past it the run " +
      "ends budget_exceeded (docs/agents.md#cost)",
  ),
  mocks: z.record(z.string(), ToolMock).optional().describe(
    "MCP tools replaced in every case's run, by tool name (the other tools are live)",
  ),
  cases: z.array(EvalCaseInput).min(1),
}).meta({ id: "EvalDataset" });
export type EvalDataset = z.infer<typeof EvalDataset>;

const RunError = z.looseObject({ code: z.string(), message: z.string() });

/** A judge call as recorded: its model, its usage and its raw answer. */
export const EvalJudgeCall = z.looseObject({
  model: z.string(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  total_tokens: z.number(),
  answer: z.string().describe("the judge model's answer, as it came"),
}).meta({ id: "EvalJudgeCall" });
export type EvalJudgeCall = z.infer<typeof EvalJudgeCall>;

/** One scorer's verdict on one case. */
export const EvalScore = z.looseObject({
  scorer: z.string(),
  score: z.number().nullable().describe("0–1; null when the scorer only measures (no threshold) or failed"),
  passed: z.boolean(),
  value: z.number().nullable().describe("what was measured: ms for latency, tokens for tokens; else null"),
  reasoning: z.string().nullable().describe("why: the judge's reasoning, or what did not match"),
  error: RunError.nullable().describe("the scorer could not score (a malformed judge answer, a bad JSONata)"),
  judge: EvalJudgeCall.nullable().describe("the judge's call, for the judge scorer"),
}).meta({ id: "EvalScore" });
export type EvalScore = z.infer<typeof EvalScore>;

/** A tool call of a case's run, in short. */
export const EvalToolCallSummary = z.looseObject({
  name: z.string(),
  status: z.enum(["running", "completed", "failed"]),
  error: z.string().nullable(),
}).meta({ id: "EvalToolCallSummary" });

export const EvalCaseStatus = z.enum(["pending", "running", "passed", "failed", "error"]);

/** One case of an eval run (one repeat of it): its run, its answer and its scores. */
export const EvalCaseResult = z.looseObject({
  eval_id: z.string(),
  index: z.number().describe("the case's position in the dataset, from 0"),
  repeat: z.number().describe("which repeat, from 0 (--repeat)"),
  case_id: z.string(),
  task: z.string().nullable(),
  input: z.unknown(),
  vars: z.record(z.string(), z.unknown()),
  expected: z.unknown().optional(),
  rubric: z.string().nullable(),
  status: EvalCaseStatus.describe("error: the run failed or a scorer could not score"),
  run_id: z.string().nullable().describe("the agent run (arun_…) or workflow run of this case"),
  answer: z.string().nullable(),
  result: z.unknown().optional().describe(
    "the parsed answer (an agent's output schema, a workflow's output)",
  ),
  error: RunError.nullable(),
  scores: z.array(EvalScore),
  score: z.number().nullable().describe("the mean of its scorers' scores"),
  total_tokens: z.number().describe("the run's tokens (a workflow's: summed over its agent steps)"),
  cost_usd: z.number().nullable().describe(
    "what the case cost by ai.prices: its run's model calls and the judge's; null when a model has no price",
  ),
  duration_ms: z.number().nullable(),
  tool_calls: z.array(EvalToolCallSummary),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
}).meta({ id: "EvalCaseResult" });
export type EvalCaseResult = z.infer<typeof EvalCaseResult>;

/** One scorer over an eval run's cases. */
export const EvalScorerAggregate = z.looseObject({
  scorer: z.string(),
  count: z.number().describe("cases it scored"),
  errors: z.number().describe("cases it could not score"),
  mean: z.number().nullable(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  pass_rate: z.number().nullable(),
  value_mean: z.number().nullable().describe("mean of the measured values (latency ms, tokens)"),
  value_p50: z.number().nullable(),
  value_p90: z.number().nullable(),
}).meta({ id: "EvalScorerAggregate" });
export type EvalScorerAggregate = z.infer<typeof EvalScorerAggregate>;

/** One tool over an eval run's cases: how often it was called and how often it failed. */
export const EvalToolEffectiveness = z.looseObject({
  tool: z.string(),
  calls: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  success_rate: z.number().nullable(),
  errors: z.array(z.object({ message: z.string(), count: z.number() })).describe(
    "its errors, most frequent first",
  ),
}).meta({ id: "EvalToolEffectiveness" });
export type EvalToolEffectiveness = z.infer<typeof EvalToolEffectiveness>;

/** The aggregates of an eval run. */
export const EvalAggregates = z.looseObject({
  cases: z.number(),
  passed: z.number(),
  failed: z.number(),
  errors: z.number(),
  pass_rate: z.number().nullable(),
  mean_score: z.number().nullable(),
  scorers: z.array(EvalScorerAggregate),
  tools: z.array(EvalToolEffectiveness),
}).meta({ id: "EvalAggregates" });
export type EvalAggregates = z.infer<typeof EvalAggregates>;

/** A scorer's change from the base eval run to the head one. */
export const EvalScorerDelta = z.looseObject({
  scorer: z.string(),
  base_mean: z.number().nullable(),
  head_mean: z.number().nullable(),
  delta: z.number().nullable(),
  base_pass_rate: z.number().nullable(),
  head_pass_rate: z.number().nullable(),
  pass_rate_delta: z.number().nullable(),
  regressed: z.boolean().describe("its mean or pass rate dropped by more than max_regression"),
}).meta({ id: "EvalScorerDelta" });

/** A case's change from base to head (its repeats averaged). */
export const EvalCaseDelta = z.looseObject({
  case_id: z.string(),
  base_score: z.number().nullable(),
  head_score: z.number().nullable(),
  delta: z.number().nullable(),
  base_passed: z.boolean(),
  head_passed: z.boolean(),
  regressed: z.boolean().describe(
    "it passed and now fails, or its score dropped by more than max_regression",
  ),
  scorers: z.record(z.string(), z.number().nullable()).describe("per scorer: head mean − base mean"),
}).meta({ id: "EvalCaseDelta" });

/** The comparison of two eval runs (`stn eval compare A B`, and the --baseline gate). */
export const EvalCompare = z.looseObject({
  base_eval_id: z.string(),
  head_eval_id: z.string(),
  max_regression: z.number(),
  regressed: z.boolean().describe("a scorer regressed: the gate fails"),
  pass_rate: z.looseObject({
    base: z.number().nullable(),
    head: z.number().nullable(),
    delta: z.number().nullable(),
  }),
  scorers: z.array(EvalScorerDelta),
  cases: z.array(EvalCaseDelta).describe("the cases in both runs"),
  regressed_cases: z.array(z.string()).describe("ids of the cases that got worse"),
  only_in_base: z.array(z.string()),
  only_in_head: z.array(z.string()),
}).meta({ id: "EvalCompare" });
export type EvalCompare = z.infer<typeof EvalCompare>;

export const EvalRunStatus = z.enum(["running", "completed", "failed", "canceled"]);

/** An eval run: a dataset run against an agent or workflow, its progress and its aggregates. */
export const EvalRun = z.looseObject({
  eval_id: z.string().describe("eval_…"),
  kind: z.enum(["agent", "workflow"]),
  target: z.string().describe("the agent or workflow evaluated"),
  environment: z.string(),
  dataset: z.looseObject({ name: z.string(), path: z.string().nullable(), cases: z.number() }),
  model: z.string().nullable().describe("the model every case ran on (--model); null: the agent's own"),
  judge_model: z.string().nullable(),
  concurrency: z.number(),
  repeat: z.number(),
  status: EvalRunStatus,
  error: RunError.nullable(),
  cases_total: z.number(),
  cases_done: z.number(),
  total_tokens: z.number().describe("summed over the cases' runs and the judge's calls"),
  cost_usd: z.number().nullable().describe("by ai.prices; null when a model has no price"),
  aggregates: EvalAggregates,
  baseline: z.looseObject({
    eval_id: z.string(),
    max_regression: z.number(),
    compare: EvalCompare.nullable().describe("null until the run has ended"),
  }).nullable(),
  created_at: z.string(),
  ended_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  cases: z.array(EvalCaseResult).optional().describe("each case (GET of one eval run)"),
}).meta({ id: "EvalRun" });
export type EvalRun = z.infer<typeof EvalRun>;

export const EvalRunList = z.looseObject({
  evals: z.array(EvalRun),
  next_cursor: z.string().nullable(),
}).meta({ id: "EvalRunList" });
export type EvalRunList = z.infer<typeof EvalRunList>;

/** The fields of POST /api/v1/evals (the MCP tool adds `wait`). */
export const StartEvalFields = z.strictObject({
  target: z.string().min(1).describe("the agent or workflow to evaluate"),
  kind: z.enum(["agent", "workflow"]).optional().describe("default: an agent of that name, else a workflow"),
  environment: Name.optional().describe("default: workflows.environment"),
  dataset: EvalDataset.optional().describe("the dataset itself (the CLI sends the file it read)"),
  dataset_name: z.string().optional().describe("a name for an inline dataset (its file's name)"),
  dataset_file: z.string().min(1).optional().describe(
    "instead of `dataset`: a file in the station's environments/<env>/evals/ (name.jsonl, name.yaml)",
  ),
  concurrency: z.int().min(1).max(64).default(4),
  repeat: z.int().min(1).max(100).default(1),
  model: z.string().min(1).optional().describe("run every case on this model (agents only)"),
  judge_model: z.string().min(1).optional().describe(
    "the judge's model (default: the dataset's, else ai.model)",
  ),
  baseline: z.string().min(1).optional().describe("an earlier eval run to compare with when done"),
  max_regression: z.number().min(0).max(1).default(0.05),
});

/** POST /api/v1/evals */
export const StartEvalBody = StartEvalFields.refine(
  (b) => (b.dataset === undefined) !== (b.dataset_file === undefined),
  { message: "send exactly one of dataset and dataset_file" },
).meta({ id: "StartEvalBody" });
export type StartEvalBody = z.input<typeof StartEvalBody>;

export const StartEvalQuery = z.object({
  wait: z.enum(["1", "true", "0", "false"]).optional().describe("1: answer when the eval run has ended"),
});

export const EvalIdParam = z.object({ eval_id: z.string().min(1).describe("the eval run's id (eval_…)") });

/** GET /api/v1/evals */
export const EvalListQuery = z.object({
  target: z.string().optional(),
  status: EvalRunStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional(),
});
export type EvalListQuery = Omit<z.input<typeof EvalListQuery>, "limit"> & { limit?: number };

/** GET /api/v1/evals/compare */
export const EvalCompareQuery = z.object({
  base: z.string().min(1).describe("the earlier eval run"),
  head: z.string().min(1).describe("the later eval run"),
  max_regression: z.coerce.number().min(0).max(1).default(0.05),
});

/** How `stn eval generate` spreads its cases. */
export const EvalStrategy = z.enum(["common", "edge_cases", "comprehensive"]);

/** POST /api/v1/eval-datasets/generate */
export const GenerateDatasetBody = z.strictObject({
  agent: z.string().min(1),
  environment: Name.optional(),
  count: z.int().min(1).max(200).default(10),
  strategy: EvalStrategy.default("common"),
  model: z.string().min(1).optional().describe("the model that writes the cases (default: ai.model)"),
}).meta({ id: "GenerateDatasetBody" });
export type GenerateDatasetBody = z.input<typeof GenerateDatasetBody>;

/** A generated dataset: cases to review before they are run. */
export const GeneratedDataset = z.looseObject({
  agent: z.string(),
  environment: z.string(),
  strategy: EvalStrategy,
  model: z.string(),
  cases: z.array(EvalCaseInput),
  file_name: z.string().describe("the suggested file in environments/<env>/evals/"),
  total_tokens: z.number(),
  skipped: z.number().describe("cases the model wrote that did not validate, left out"),
}).meta({ id: "GeneratedDataset" });
export type GeneratedDataset = z.infer<typeof GeneratedDataset>;

/** A dataset file of an environment. */
export const EvalDatasetFile = z.looseObject({
  name: z.string().describe("its file name in environments/<env>/evals/"),
  environment: z.string(),
  cases: z.number().nullable().describe("null when it does not parse"),
  error: z.string().nullable(),
}).meta({ id: "EvalDatasetFile" });

export const EvalDatasetList = z.looseObject({ datasets: z.array(EvalDatasetFile) }).meta({
  id: "EvalDatasetList",
});

export const EvalDatasetQuery = z.object({ environment: Name.optional() });
