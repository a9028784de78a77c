/** The `timer` step: a durable wait for a duration or until a time. */

import { z } from "zod";
import { parseDuration } from "../../lib/duration.ts";
import { contextScope, hasTemplate, renderString } from "../expr.ts";
import { common, durationProblem, oneOf, rule, templates } from "./fields.ts";
import { type Executor, failed, type StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("timer"),
    /** A duration, or a `${…}` template producing one. */
    duration: z.string().min(1).check(rule((s) => hasTemplate(s) ? undefined : durationProblem(s)), templates)
      .optional(),
    /** An ISO-8601 instant, or a `${…}` template producing one. */
    until: z.string().min(1).check(
      rule((s) =>
        hasTemplate(s) || !Number.isNaN(Date.parse(s)) ? undefined : {
          code: "invalid_value",
          message: `\`until\` is not a date: ${JSON.stringify(s)}`,
          hint: 'an ISO-8601 instant, e.g. "2030-01-01T09:00:00Z"',
        }
      ),
      templates,
    ).optional(),
  }).check(oneOf("duration", "until", "a timer", 'e.g. `duration: "10m"`'));
export type TimerState = z.infer<ReturnType<typeof schema>>;

/** timer: a durable sleep for `duration`, or until the `until` instant. */
const execute: Executor<TimerState> = async (step, scope, ctx) => {
  try {
    if (step.until) {
      const at = Date.parse(String(await renderString(step.until, contextScope(scope))));
      if (Number.isNaN(at)) {
        return failed("invalid_timer", `timer ${step.id}: until is not an ISO-8601 instant`);
      }
      return { kind: "sleep", until: at };
    }
    const raw = await renderString(step.duration ?? "", contextScope(scope));
    const ms = parseDuration(raw as string | number);
    if (ms === null) {
      return failed("invalid_timer", `timer ${step.id}: duration ${JSON.stringify(raw)} is not a duration`);
    }
    return { kind: "sleep", until: (ctx.now?.() ?? Date.now()) + ms };
  } catch (err) {
    return failed("expression_failed", err);
  }
};

export const timer: StepType<TimerState> = {
  type: "timer",
  schema,
  waits: true,
  executor: execute,
};
