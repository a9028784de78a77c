/** The `await` step: a durable wait for a signal to the run or a matching event. */

import { z } from "zod";
import { EventName } from "../../contract/events.ts";
import { parseDuration } from "../../lib/duration.ts";
import { common, Expression, rule, stateId } from "./fields.ts";
import type { Executor, StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("await"),
    /** The name of the event or signal to wait for. */
    event: EventName,
    /** JSONata over `{event, ...context}`: only an event for which it is true ends the wait. */
    match: Expression.optional(),
    onTimeout: stateId().optional(),
  }).check(rule((s) =>
    s.onTimeout !== undefined && s.timeout === undefined
      ? {
        code: "missing_field",
        message: "`onTimeout` is set but the step has no `timeout`",
        hint: 'add `timeout: "1h"` (without one the step waits for ever)',
        at: ["timeout"],
      }
      : undefined
  ));
export type AwaitState = z.infer<ReturnType<typeof schema>>;

/** await: parks the step until a signal to this run or an event of that name (and `match`) arrives. */
const execute: Executor<AwaitState> = (step) =>
  Promise.resolve({
    kind: "await",
    event: step.event,
    match: step.match ?? null,
    timeoutMs: step.timeout ? parseDuration(step.timeout) : null,
  });

export const awaitType: StepType<AwaitState> = {
  type: "await",
  schema,
  waits: true,
  targets: [["onTimeout"]],
  // A timeout without a route of its own fails the step, so only `next` decides whether it can exit.
  canExit: (s) => s.onTimeout === undefined || s.next === undefined,
  // The event becomes the output (at `resultPath`, default the step id); a timeout goes to onTimeout, else fails.
  wait: {
    received: (_s, event) => ({ kind: "completed", output: event }),
    timedOut: (s, at) =>
      s.onTimeout ? { kind: "completed", output: { timed_out: true, at }, next: s.onTimeout } : {
        kind: "failed",
        error: { code: "timed_out", message: `no ${s.event} event arrived before the step's timeout` },
      },
  },
  executor: execute,
};
