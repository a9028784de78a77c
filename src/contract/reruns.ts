/** The contract of repairing runs: retry, fork, bulk retry, and evaluating an expression against a run's data. */

import { z } from "zod";

const version = z.int().min(1).optional().describe("a stored version of the run's workflow to go on with");
const definition = z.unknown().optional().describe(
  "a workflow definition to go on with (what `--from-definition FILE` sends); validated, kept with the run",
);

/** POST /api/v1/workflow-runs/{run_id}/retry */
export const RetryBody = z.strictObject({ version, definition }).meta({ id: "RetryBody" });
export type RetryBody = z.input<typeof RetryBody>;

/** POST /api/v1/workflow-runs/{run_id}/fork */
export const ForkBody = z.strictObject({
  from: z.string().min(1).describe(
    "the step to resume at (a step inside foreach/parallel/try names its block: the whole block re-runs)",
  ),
  input: z.record(z.string(), z.unknown()).optional().describe("the fork's input (default: the parent's)"),
  version,
  definition,
}).meta({ id: "ForkBody" });
export type ForkBody = z.input<typeof ForkBody>;

/** POST /api/v1/workflow-runs/retry: every matching run retried once. */
export const BulkRetryBody = z.strictObject({
  workflow_id: z.string().min(1),
  since: z.string().min(1).describe("a duration (`1h`, `30m`, `2d`): runs that ended within it"),
  status: z.enum(["failed", "canceled"]).default("failed"),
  error_code: z.string().optional().describe("only runs whose error has this code"),
  version,
  dry_run: z.boolean().default(false).describe("list what would be retried, retry nothing"),
}).meta({ id: "BulkRetryBody" });
export type BulkRetryBody = z.input<typeof BulkRetryBody>;

/** One run a bulk retry matched. */
export const BulkRetryItem = z.looseObject({
  run_id: z.string(),
  error_code: z.string().nullable(),
  ended_at: z.string().nullable(),
  outcome: z.enum(["would_retry", "retried", "skipped", "refused"]),
  reason: z.string().nullable().describe("why a run was skipped (already retried in the window) or refused"),
}).meta({ id: "BulkRetryItem" });

export const BulkRetryResult = z.looseObject({
  dry_run: z.boolean(),
  runs: z.array(BulkRetryItem),
  retried: z.number(),
}).meta({ id: "BulkRetryResult" });
export type BulkRetryResult = z.infer<typeof BulkRetryResult>;

/** POST /api/v1/workflow-runs/{run_id}/eval */
export const EvalBody = z.strictObject({
  expression: z.string().describe("a JSONata expression, as a transform step would run it"),
  step: z.string().optional().describe(
    "evaluate against the data this step saw (default: the run's data now)",
  ),
  input: z.unknown().optional().describe("evaluate against this data instead of the run's"),
}).meta({ id: "EvalBody" });
export type EvalBody = z.input<typeof EvalBody>;

export const EvalResult = z.looseObject({
  value: z.unknown().describe("the value (null when the expression matches nothing)"),
  data: z.unknown().describe("the data it was evaluated against"),
}).meta({ id: "EvalResult" });
export type EvalResult = z.infer<typeof EvalResult>;
