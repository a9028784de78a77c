import { z } from "zod";
import { contextScope, evaluate } from "../expr.ts";
import { common, Expression } from "./fields.ts";
import { type Executor, failed, type StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("transform"),
    expression: Expression,
  });
export type TransformState = z.infer<ReturnType<typeof schema>>;

/** transform: output = the JSONata expression over the context (objects as-is, other values as `{result}`). */
const execute: Executor<TransformState> = async (step, scope) => {
  try {
    const value = await evaluate(step.expression, scope, contextScope(scope).bindings);
    const output = value !== null && typeof value === "object" && !Array.isArray(value)
      ? value
      : { result: value ?? null };
    return { kind: "completed", output };
  } catch (err) {
    return failed("expression_failed", err);
  }
};

export const transform: StepType<TransformState> = {
  type: "transform",
  schema,
  executor: execute,
};
