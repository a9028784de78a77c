import type { z } from "zod";
import type { SwitchState } from "../definition/schema.ts";
import { contextScope, evaluate, evaluateCondition } from "../expr.ts";
import { type Executor, failed } from "./types.ts";

/** switch: the first condition that is true picks `next`; else `defaultNext`; else the step fails. */
export const switchStep: Executor<z.infer<typeof SwitchState>> = async (step, scope) => {
  try {
    const { bindings } = contextScope(scope);
    const data = step.dataPath ? await evaluate(step.dataPath, scope, bindings) : scope;
    for (const [i, cond] of step.conditions.entries()) {
      if (await evaluateCondition(cond.if, { data, bindings })) {
        return {
          kind: "completed",
          output: { matched: i, condition: cond.if, next: cond.next },
          next: cond.next,
        };
      }
    }
    if (step.defaultNext) {
      return {
        kind: "completed",
        output: { matched: "default", next: step.defaultNext },
        next: step.defaultNext,
      };
    }
    return {
      kind: "failed",
      error: {
        code: "no_matching_condition",
        message: `no condition of switch ${step.id} matched and it has no defaultNext`,
      },
    };
  } catch (err) {
    return failed("expression_failed", err);
  }
};
