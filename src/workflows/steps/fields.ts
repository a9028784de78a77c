import { z } from "zod";
import { TaskQueue } from "../../contract/task_queue.ts";
import {
  coded,
  DURATION_HINT,
  durationProblem,
  type IssueParams,
  type Problem,
  rule,
} from "../../lib/schema_rules.ts";
import { checkTemplates, parseCheck } from "../expr.ts";
import { parseDuration } from "../../lib/duration.ts";

/**
 * The field schemas step types share, and the two ways a schema gives an issue stn's own code and
 * hint: `rule` (a check that returns Problems) and `coded` (an error function for zod's own issues,
 * such as a missing field). Both leave what the validator needs in the issue's `params`.
 */

export { coded, durationProblem, type IssueParams, rule };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Workflow ids: `[a-z0-9][a-z0-9_-]*`. */
export const WORKFLOW_ID = /^[a-z0-9][a-z0-9_-]*$/;

/** A state id (letters of either case allowed); `error` names what a missing or mistyped one is. */
export function stateId(error?: z.core.$ZodErrorMap): z.ZodString {
  return z.string({ error }).min(1).max(128).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    message: "ids start with a letter or digit and contain only letters, digits, '_', '-' and '.'",
  });
}

/** A duration string ("30s", "5m", "1h30m"); kept as written so an exported definition round-trips. */
export const Duration = z.string({
  error: coded((i) =>
    i.code === "invalid_type" && i.input !== undefined
      ? {
        code: "invalid_duration",
        message: `invalid duration ${JSON.stringify(i.input)}`,
        hint: DURATION_HINT,
      }
      : undefined
  ),
}).check(rule(durationProblem));

/** The problem with a JSONata expression, if it does not parse; `offset` points at the bad token. */
export function expressionProblem(src: string): Problem | undefined {
  const problem = parseCheck(src);
  if (!problem) return undefined;
  return {
    code: "invalid_expression",
    message: `JSONata does not parse at position ${problem.position}: ${problem.message}`,
    hint: problem.hint ?? "see https://docs.jsonata.org for the expression syntax",
    offset: problem.position,
  };
}

/** A JSONata expression that parses. */
export const Expression = z.string().min(1).check(rule(expressionProblem));

/** The problems of the `${…}` templates anywhere inside a value. */
export function templateProblems(v: unknown): Problem[] {
  const found: Problem[] = [];
  // One path, pushed and popped: most values hold no template, and a copy is made only for a problem.
  const path: (string | number)[] = [];
  const walk = (x: unknown): void => {
    if (typeof x === "string") {
      for (const p of checkTemplates(x)) {
        found.push({
          code: "invalid_template",
          message: `template does not parse at position ${p.position}: ${p.message}`,
          hint: p.hint ?? "templates are `${ jsonata }`; write `$${` for a literal `${`",
          offset: p.position,
          at: [...path],
        });
      }
    } else if (Array.isArray(x)) {
      x.forEach((y, i) => (path.push(i), walk(y), path.pop()));
    } else if (isObj(x)) {
      for (const k in x) path.push(k), walk(x[k]), path.pop();
    }
  };
  walk(v);
  return found;
}

/** A check that every `${…}` template inside the value parses. */
export const templates = rule<unknown>((v) => templateProblems(v));

export const RetryPolicy = z.strictObject({
  max_attempts: z.int().min(1).max(100).default(1),
  initial_interval: Duration.default("1s"),
  backoff_coefficient: z.number().min(1).max(10).default(2),
  max_interval: Duration.default("1m"),
  non_retryable: z.array(z.string()).default([]),
}).describe("retry");
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** A task queue's name (shared with agents' `queue:` and `stn worker --queue`). */
export { TaskQueue };

/** How soon a run or step is admitted when slots are scarce: 0 (last) to 9 (first); default 5. */
export const Priority = z.int().min(0).max(9).describe("priority");

/**
 * One concurrency limit of a step (docs/workflows.md#flow-control): at most `limit` attempts hold the key at
 * once; `key` is a `${…}` template over the run's input and earlier steps' outputs, shared by every workflow
 * that names the same key; without it, one key per workflow and step id.
 */
export const StepConcurrencyLimit = z.strictObject({
  key: z.string().min(1).check(templates).optional(),
  limit: z.int().min(1).max(100_000),
}).describe("a step concurrency limit");

/** A period of a rate limit: at least a millisecond, at most a day (the window the ledger keeps starts for). */
const RatePeriod = Duration.check(rule((v: string) => {
  const ms = parseDuration(v);
  return ms !== null && (ms < 1 || ms > 86_400_000)
    ? {
      code: "invalid_duration",
      message: `rate_limit period ${v} is not between 1ms and 24h`,
      hint: DURATION_HINT,
    }
    : undefined;
}));

/** At most `limit` starts per `period` (any window of that length) per key; workflows and steps share it. */
export const RateLimit = z.strictObject({
  key: z.string().min(1).check(templates).optional(),
  limit: z.int().min(1).max(100_000),
  period: RatePeriod,
}).describe("rate_limit");
export type RateLimit = z.infer<typeof RateLimit>;

/** Fields every state type has; a step type's schema spreads them next to its `type` and own fields. */
export const common = {
  id: stateId(coded((i) =>
    i.input === undefined
      ? {
        code: "missing_state_id",
        message: "state has no `id`",
        hint: "give every state an `id` (or `name`)",
        parent: true,
      }
      : undefined
  )),
  /** Display label; the Go project's files often set it next to `id` (alone, the loader makes it the id). */
  name: z.string().optional(),
  description: z.string().optional(),
  next: stateId().optional(),
  end: z.boolean().optional(),
  /** Dot path where the output is written in the context (default: the step id). */
  resultPath: z.string().min(1).optional(),
  /** `{key: expr}`: each expr evaluated with the step output as `$`, written at the top level. */
  output: z.record(z.string(), Expression).optional(),
  timeout: Duration.optional(),
  retry: RetryPolicy.optional(),
  /** The task queue whose workers run the step (docs/workers.md); default: the workflow's `defaults.queue`. */
  queue: TaskQueue.optional(),
  /** Limits the step must fit before it starts; it waits for a slot, never fails for one (flow control). */
  concurrency: z.array(StepConcurrencyLimit).min(1).max(4).optional(),
  /** Which waiting step takes a freed slot first (default: the run's priority). */
  priority: Priority.optional(),
  /** How often the step may start; a step over it waits for the window (flow control). */
  rate_limit: RateLimit.optional(),
};

/** The error of a block's `states` that is missing, empty or not a list. */
export const blockStates = coded((i) =>
  i.code === "invalid_type" || i.code === "too_small"
    ? {
      code: "missing_states",
      message: "a block needs at least one state",
      hint: "add `states:` with at least one state",
    }
    : undefined
);

/** Rules every state follows whatever its type. */
export const commonRules = rule<Record<string, unknown>>(
  (s) =>
    isObj(s) && s.next !== undefined && s.end === true
      ? {
        code: "conflicting_transition",
        message: "`end: true` and `next` are both set",
        hint: "keep one",
        at: ["end"],
      }
      : undefined,
  true,
);

/** A rule for two fields of which exactly one must be set (`missing_field` / `conflicting_fields`). */
export function oneOf(a: string, b: string, what: string, example: string) {
  return rule<Record<string, unknown>>((s) => {
    if (!isObj(s)) return undefined;
    if (s[a] === undefined && s[b] === undefined) {
      return { code: "missing_field", message: `${what} needs \`${a}\` or \`${b}\``, hint: example };
    }
    if (s[a] !== undefined && s[b] !== undefined) {
      return {
        code: "conflicting_fields",
        message: `\`${a}\` and \`${b}\` are both set`,
        hint: "keep one",
        at: [b],
      };
    }
    return undefined;
  }, true);
}
