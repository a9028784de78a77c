import { z } from "zod";
import { contextScope, evaluate, evaluateCondition } from "../expr.ts";
import { common, Expression, stateId } from "./fields.ts";
import { type Executor, failed, type StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("switch"),
    dataPath: Expression.optional(),
    conditions: z.array(z.strictObject({ if: Expression, next: stateId() }).describe("a condition")).min(1),
    defaultNext: stateId().optional(),
  });
export type SwitchState = z.infer<ReturnType<typeof schema>>;

/** switch: the first condition that is true picks `next`; else `defaultNext`; else the step fails. */
const execute: Executor<SwitchState> = async (step, scope) => {
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

export const switchType: StepType<SwitchState> = {
  type: "switch",
  schema,
  targets: [["defaultNext"], ["conditions", "*", "next"]],
  canExit: (s) => s.defaultNext === undefined,
  executor: execute,
};
