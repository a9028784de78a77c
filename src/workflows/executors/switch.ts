import type { z } from "zod";
import type { SwitchState } from "../definition/schema.ts";
import { evaluate } from "../engine/eval.ts";
import { type Executor, failed } from "./types.ts";

/** switch: the first condition that is true picks `next`; else `defaultNext`; else the step fails. */
export const switchStep: Executor<z.infer<typeof SwitchState>> = async (step, scope) => {
  try {
    const input = step.dataPath ? await evaluate(step.dataPath, scope, scope) : scope;
    for (const [i, cond] of step.conditions.entries()) {
      if (await evaluate(cond.if, input, scope) === true) {
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
    return failed("expression_error", err);
  }
};
