import type { z } from "zod";
import type { TimerState } from "../definition/schema.ts";
import { contextScope, renderString } from "../expr.ts";
import { parseDuration } from "../../lib/duration.ts";
import { type Executor, failed } from "./types.ts";

/** timer: a durable sleep for `duration`, or until the `until` instant. */
export const timer: Executor<z.infer<typeof TimerState>> = async (step, scope) => {
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
    return { kind: "sleep", until: Date.now() + ms };
  } catch (err) {
    return failed("expression_failed", err);
  }
};
