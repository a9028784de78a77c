import { z } from "zod";
import { parseDuration } from "../../lib/duration.ts";

/**
 * The normalised workflow definition (shared/spec/workflows.md): what every part after the loader
 * sees. Aliases from the Go project's files (transition, set, sleep, operation+input.task, …) are
 * rewritten into this form by the loader; these schemas are strict, so an unknown field is an error.
 */

/** State and workflow ids: `[a-z0-9][a-z0-9_-]*`-style, letters of either case allowed in state ids. */
export const WORKFLOW_ID = /^[a-z0-9][a-z0-9_-]*$/;
const stateId = z.string().min(1).max(128).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
  message: "ids start with a letter or digit and contain only letters, digits, '_', '-' and '.'",
});

/** A duration string ("30s", "5m", "1h30m"); kept as written so an exported definition round-trips. */
export const Duration = z.string().refine((s) => parseDuration(s) !== null, {
  message: 'expected a duration like "30s", "5m" or "1h"',
});

/** A JSONata expression (checked for syntax by the validator). */
export const Expression = z.string().min(1);

export const RetryPolicy = z.strictObject({
  max_attempts: z.int().min(1).max(100).default(1),
  initial_interval: Duration.default("1s"),
  backoff_coefficient: z.number().min(1).max(10).default(2),
  max_interval: Duration.default("1m"),
  non_retryable: z.array(z.string()).default([]),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** Fields every state type has. */
const common = {
  id: stateId,
  /** Display label; the Go project's files often set it next to `id` (alone, the loader makes it the id). */
  name: z.string().optional(),
  description: z.string().optional(),
  next: stateId.optional(),
  end: z.boolean().optional(),
  /** Dot path where the output is written in the context (default: the step id). */
  resultPath: z.string().min(1).optional(),
  /** `{key: expr}`: each expr evaluated with the step output as `$`, written at the top level. */
  output: z.record(z.string(), Expression).optional(),
  timeout: Duration.optional(),
  retry: RetryPolicy.optional(),
};

/** A nested list of states with its own transitions (parallel branch, foreach iterator, try blocks). */
export interface Block {
  start?: string;
  states: State[];
}
export const Block: z.ZodType<Block> = z.strictObject({
  start: stateId.optional(),
  get states() {
    return z.array(State).min(1);
  },
});

export const AgentState = z.strictObject({
  ...common,
  type: z.literal("agent"),
  /** `name` or `name@environment`. */
  agent: z.string().min(1),
  task: z.string().optional(),
  input: z.strictObject({ variables: z.record(z.string(), z.unknown()).optional() }).optional(),
});

export const TransformState = z.strictObject({
  ...common,
  type: z.literal("transform"),
  expression: Expression,
});

export const InjectState = z.strictObject({ ...common, type: z.literal("inject"), data: z.unknown() });

export const SwitchState = z.strictObject({
  ...common,
  type: z.literal("switch"),
  dataPath: Expression.optional(),
  conditions: z.array(z.strictObject({ if: Expression, next: stateId })).min(1),
  defaultNext: stateId.optional(),
});

export const ParallelState = z.strictObject({
  ...common,
  type: z.literal("parallel"),
  branches: z.array(z.strictObject({
    name: stateId,
    start: stateId.optional(),
    get states() {
      return z.array(State).min(1);
    },
  })).min(1),
  join: z.strictObject({ mode: z.literal("all") }).optional(),
});

export const ForeachState = z.strictObject({
  ...common,
  type: z.literal("foreach"),
  /** JSONata giving the array to iterate. */
  itemsPath: Expression,
  itemName: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default("item"),
  maxConcurrency: z.int().min(1).max(100).default(1),
  iterator: Block,
});

export const HumanApprovalState = z.strictObject({
  ...common,
  type: z.literal("human_approval"),
  message: z.string().min(1),
  approvers: z.array(z.string()).optional(),
  timeout: Duration.optional(), // default 1h, applied by the engine
  onReject: stateId.optional(),
  onTimeout: stateId.optional(),
});

export const TimerState = z.strictObject({
  ...common,
  type: z.literal("timer"),
  /** A duration, or a `${…}` template producing one. */
  duration: z.string().min(1).optional(),
  /** An ISO-8601 instant, or a `${…}` template producing one. */
  until: z.string().min(1).optional(),
});

export const TryState = z.strictObject({
  ...common,
  type: z.literal("try"),
  try: Block,
  catch: Block.optional(),
  finally: Block.optional(),
});

export const SandboxState = z.strictObject({
  ...common,
  type: z.literal("sandbox"),
  command: z.array(z.string()).min(1).optional(),
  script: z.string().min(1).optional(),
  runtime: z.string().min(1).optional(),
  image: z.string().min(1).optional(),
  stage: z.array(z.strictObject({ file_key: z.string().min(1), destination: z.string().min(1) })).optional(),
  publish: z.array(z.string().min(1)).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

/** Any state, discriminated by `type`. */
export type State =
  | z.infer<typeof AgentState>
  | z.infer<typeof TransformState>
  | z.infer<typeof InjectState>
  | z.infer<typeof SwitchState>
  | (Omit<z.infer<typeof ParallelState>, "branches"> & { branches: Array<{ name: string } & Block> })
  | (Omit<z.infer<typeof ForeachState>, "iterator"> & { iterator: Block })
  | z.infer<typeof HumanApprovalState>
  | z.infer<typeof TimerState>
  | (Omit<z.infer<typeof TryState>, "try" | "catch" | "finally"> & {
    try: Block;
    catch?: Block;
    finally?: Block;
  })
  | z.infer<typeof SandboxState>;

export const State: z.ZodType<State> = z.discriminatedUnion("type", [
  AgentState,
  TransformState,
  InjectState,
  SwitchState,
  ParallelState,
  ForeachState,
  HumanApprovalState,
  TimerState,
  TryState,
  SandboxState,
]) as unknown as z.ZodType<State>;

/** The state types, in the spec's order. */
export const STATE_TYPES = [
  "agent",
  "transform",
  "inject",
  "switch",
  "parallel",
  "foreach",
  "human_approval",
  "timer",
  "try",
  "sandbox",
] as const;
export type StateType = typeof STATE_TYPES[number];

/** A JSON Schema document (validated as a schema by the validator). */
export const JsonSchema = z.record(z.string(), z.unknown());

export const Schedule = z.strictObject({
  cron: z.string().min(1),
  timezone: z.string().min(1).optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  enabled: z.boolean().default(true),
});

export const WorkflowDefinition = z.strictObject({
  id: z.string().regex(WORKFLOW_ID, { message: "workflow ids match [a-z0-9][a-z0-9_-]*" }),
  name: z.string().optional(),
  description: z.string().optional(),
  version: z.union([z.string(), z.number()]).optional(),
  start: stateId.optional(),
  get states() {
    return z.array(State).min(1);
  },
  inputSchema: JsonSchema.optional(),
  outputSchema: JsonSchema.optional(),
  defaults: z.strictObject({ timeout: Duration.optional(), retry: RetryPolicy.optional() }).optional(),
  schedule: Schedule.optional(),
});
export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;
