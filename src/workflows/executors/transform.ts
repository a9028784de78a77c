import type { TransformState } from "../definition/schema.ts";
import { contextScope, evaluate } from "../expr.ts";
import { type Executor, failed } from "./types.ts";
import type { z } from "zod";

/** transform: output = the JSONata expression over the context (objects as-is, other values as `{result}`). */
export const transform: Executor<z.infer<typeof TransformState>> = async (step, scope) => {
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
