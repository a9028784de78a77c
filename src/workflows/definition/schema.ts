import { CronPattern } from "croner";
import { z } from "zod";
import { schemaProblem } from "../json_schema.ts";
import { EventName } from "../../contract/events.ts";
import {
  blockStates,
  coded,
  Duration,
  Expression,
  RetryPolicy,
  rule,
  stateId,
  TaskQueue,
  WORKFLOW_ID,
} from "../steps/fields.ts";
import { stateSchemas } from "../steps/registry.ts";
import { errorMessage } from "../../errors.ts";
import { Concurrency, Debounce, Priority, RateLimit, Singleton } from "./flow_control.ts";

/**
 * The normalised workflow definition (docs/design/workflows-dsl.md#normalised-form): what every part after
 * the loader sees. Aliases from the Go project's files (transition, set, sleep, operation+input.task, …) are
 * rewritten into this form by the loader; these schemas are strict, so an unknown field is an error. The
 * states come from the step-type registry (`steps/registry.ts`).
 */

export { RetryPolicy };
export type { Block } from "../steps/types.ts";
export type { State } from "../steps/registry.ts";

/** Time zones already found valid (checking one builds a formatter); bounded. */
const knownZones = new Set<string>();

/** An IANA time zone name, checked (shared with agent schedules). */
export const timezone = z.string().min(1).check(rule((zone) => {
  if (knownZones.has(zone)) return undefined;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
  } catch {
    return {
      code: "invalid_timezone",
      message: `unknown time zone ${JSON.stringify(zone)}`,
      hint: 'use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"',
    };
  }
  if (knownZones.size >= 1000) knownZones.delete(knownZones.values().next().value!);
  knownZones.add(zone);
  return undefined;
}));

/** A cron expression, checked by croner (shared with agent schedules). */
export const cron = z.string().min(1).check(rule((pattern) => {
  try {
    new CronPattern(pattern);
    return undefined;
  } catch (err) {
    return {
      code: "invalid_cron",
      message: `invalid cron expression ${JSON.stringify(pattern)}: ${errorMessage(err)}`,
      hint: 'five or six fields, e.g. "0 9 * * 1-5" (09:00 on weekdays) or "*/15 * * * *"',
    };
  }
}));

const Schedule = z.strictObject({
  cron,
  timezone: timezone.optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  enabled: z.boolean().default(true),
}).describe("schedule");

/** Starts a run when an event of that name arrives and `if` holds; `input` maps the event to the run's input. */
const Trigger = z.strictObject({
  event: EventName,
  /** JSONata over `{event}` (`event.data.branch = 'main'`). */
  if: Expression.optional(),
  /** `{key: JSONata over {event}}`; without it the run's input is the event's data (when an object). */
  input: z.record(z.string(), Expression).optional(),
}).describe("a trigger");

/** A JSON Schema document (draft 2020-12), checked as one. */
export const JsonSchema = z.record(z.string(), z.unknown()).check(rule(schemaProblem));

const workflowId = z.string({
  error: coded((i) =>
    i.input === undefined
      ? {
        code: "missing_id",
        message: "the workflow has no `id`",
        hint: "add `id:` or name the file `<id>.workflow.yaml`",
      }
      : undefined
  ),
}).check(rule((id) =>
  WORKFLOW_ID.test(id) ? undefined : {
    code: "invalid_id",
    message: `invalid workflow id ${JSON.stringify(id)}`,
    hint: "ids match [a-z0-9][a-z0-9_-]*, e.g. `deploy-api`",
  }
));

/** The definition schema for a set of state schemas. */
function definitionOf(state: ReturnType<typeof stateSchemas>["state"]) {
  const noStates = coded(() => ({
    code: "missing_states",
    message: "the workflow has no `states`",
    hint: "add `states:` with at least one state",
  }));
  const states: z.core.$ZodErrorMap = (i) => (i.input === undefined ? noStates(i) : blockStates(i));
  return z.strictObject({
    id: workflowId,
    name: z.string().optional(),
    description: z.string().optional(),
    version: z.union([z.string(), z.number()]).optional(),
    start: stateId().optional(),
    states: z.array(state, { error: states }).min(1, { error: states }),
    inputSchema: JsonSchema.optional(),
    outputSchema: JsonSchema.optional(),
    defaults: z.strictObject({
      timeout: Duration.optional(),
      retry: RetryPolicy.optional(),
      queue: TaskQueue.optional(),
    }).describe(
      "defaults",
    )
      .optional(),
    schedule: Schedule.optional(),
    concurrency: Concurrency.optional(),
    priority: Priority.optional(),
    singleton: Singleton.optional(),
    rate_limit: RateLimit.optional(),
    debounce: Debounce.optional(),
    triggers: z.array(Trigger).optional(),
  }).describe("the workflow");
}

let built: { state: unknown; schema: ReturnType<typeof definitionOf> } | undefined;

/** The definition schema for the step types registered now (rebuilt after a type is registered). */
export function definitionSchema(): ReturnType<typeof definitionOf> {
  const { state } = stateSchemas();
  if (built?.state !== state) built = { state, schema: definitionOf(state) };
  return built.schema;
}

/** The definition schema of the built-in step types, for parsing a definition already known to be valid. */
export const WorkflowDefinition = definitionSchema();
export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;
