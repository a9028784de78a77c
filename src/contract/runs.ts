/** The contract of workflow runs: starting one, a run with its steps, run events, lists and controls. */

import { z } from "zod";

/** The states of a run (the engine's ledger uses this list too). */
export const RunStatus = z.enum([
  "pending",
  "running",
  "waiting",
  "waiting_for_concurrency",
  "paused",
  "completed",
  "failed",
  "canceled",
]);
export type RunStatus = z.infer<typeof RunStatus>;

/** A step or run failure: a stable code, a message, and the step path. */
export const StepError = z.looseObject({ code: z.string(), message: z.string(), step: z.string().optional() })
  .meta({ id: "StepError" });

/** A workflow run. */
export const Run = z.looseObject({
  run_id: z.string(),
  id: z.string().meta({ deprecated: true }).describe("deprecated: the same as run_id (kept for old scripts)"),
  workflow_id: z.string(),
  workflow_version: z.number().nullable(),
  status: RunStatus,
  input: z.unknown(),
  result: z.unknown(),
  error: StepError.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  trace_id: z.string().nullable().describe("the OpenTelemetry trace of the run (docs/observability.md)"),
  cost_usd: z.number().nullable().describe(
    "what its agent steps' runs (and their child agents') cost in USD (docs/agents.md#cost); null when none " +
      "has a known price",
  ),
  waiting_for: z.object({ key: z.string(), position: z.number() }).optional().describe(
    "GET of one run waiting_for_concurrency: the key it waits for and its place in that key's queue (1 = next)",
  ),
  definition: z.unknown().optional().describe(
    "the exact definition the run runs (GET of one run); workflow_version is null for a one-off file run",
  ),
  parent_run_id: z.string().nullable().describe("the run this one was forked from"),
  forked_from: z.string().nullable().describe("the step a forked run resumed at"),
  forks: z.array(z.string()).optional().describe("the runs forked from this one (GET of one run)"),
}).meta({ id: "Run" });
export type Run = z.infer<typeof Run>;

/** One attempt of one step of a run; only a completed step has an output. */
export const Step = z.looseObject({
  path: z.string(),
  step_id: z.string(),
  type: z.string(),
  visit: z.number(),
  attempt: z.number(),
  status: z.string(),
  output: z.unknown(),
  error: StepError.nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  reused: z.boolean().describe(
    "copied completed from the parent run by a fork, never executed here",
  ),
  reused_from: z.looseObject({ run_id: z.string(), path: z.string(), visit: z.number(), attempt: z.number() })
    .nullable().describe("the parent run's attempt whose output a reused step carries"),
  waiting_for: z.string().optional().describe(
    "why a step is not running yet, e.g. `waiting for a worker on queue gpu`, `concurrency key step:acme " +
      "(position 2)`, `rate limit step:acme until 2026-01-01T00:00:00.000Z` (docs/workflows.md#flow-control)",
  ),
  waiting_for_concurrency: z.object({ key: z.string(), position: z.number() }).optional().describe(
    "a step waiting_for_concurrency: the key it waits for and its place in that key's queue (1 = next)",
  ),
}).meta({ id: "Step" });
export type Step = z.infer<typeof Step>;

/** One event of a run, as sent in the `data` of an SSE message (its `id` is `seq`, its `event` is `type`). */
export const RunEvent = z.looseObject({
  seq: z.number(),
  type: z.string(),
  step: z.string().nullable(),
  data: z.unknown(),
  time: z.string(),
}).meta({ id: "RunEvent" });
export type RunEvent = z.infer<typeof RunEvent>;

/** The start kinds a caller of the runs API may claim (`cron` is the scheduler's alone). */
export const RequestTrigger = z.enum(["manual", "api", "mcp"]);
export type RequestTrigger = z.infer<typeof RequestTrigger>;

/** POST /api/v1/workflow-runs: a stored workflow by id (and version), or an inline definition. */
export const StartRunBody = z.strictObject({
  workflow_id: z.string().min(1).optional().describe("the stored workflow to run"),
  workflowId: z.string().min(1).optional().meta({ deprecated: true }).describe("deprecated: use workflow_id"),
  version: z.int().min(1).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  definition: z.unknown().optional().describe(
    "a workflow definition to validate and run once (what `stn workflow run file.yaml` sends): it is not " +
      "stored as a workflow, so its schedule and triggers stay off; the run keeps it",
  ),
  save: z.boolean().default(false).describe(
    "with definition: also store it as a workflow, as `stn workflow apply` does (`stn workflow run --save`)",
  ),
  trigger: RequestTrigger.default("api").describe(
    "who starts the run, kept as `workflow.trigger` in its context: the CLI sends `manual`",
  ),
  record: z.boolean().optional().describe(
    "record its agent runs' model and tool calls: GET /api/v1/workflow-runs/{run_id}/cassette answers the cassette",
  ),
  priority: z.int().min(0).max(9).optional().describe(
    "0 (last) to 9 (first) when concurrency slots are scarce; default the workflow's `priority`, else 5",
  ),
}).meta({ id: "StartRunBody" });
export type StartRunBody = z.input<typeof StartRunBody>;

/** POST /api/v1/workflows/{id}/runs */
export const StartStoredRunBody = StartRunBody.omit({
  workflow_id: true,
  workflowId: true,
  definition: true,
  save: true,
});

/** GET /api/v1/workflow-runs */
export const RunListQuery = z.object({
  workflow_id: z.string().optional(),
  status: RunStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional().describe("next_cursor of the previous page"),
});
export type RunListQuery = z.input<typeof RunListQuery>;

export const RunList = z.looseObject({
  runs: z.array(Run),
  next_cursor: z.string().nullable().describe("pass as cursor for the next page; null on the last"),
}).meta({ id: "RunList" });
export type RunList = z.infer<typeof RunList>;

export const StepList = z.looseObject({ steps: z.array(Step) }).meta({ id: "StepList" });

/** GET /api/v1/workflow-runs/{run_id}/events */
export const RunEventsQuery = z.object({
  // Checked by the route, so a bad cursor (here or in Last-Event-ID) is one `invalid_cursor`.
  after: z.string().optional().describe(
    'resume after this seq, or "now" for only new events (Last-Event-ID wins)',
  ),
  follow: z.enum(["true", "false"]).optional().describe("false: only the stored events, then end"),
});

export const CancelBody = z.strictObject({ reason: z.string().optional() });

export const RunIdParam = z.object({ run_id: z.string().min(1).describe("the run's id") });
