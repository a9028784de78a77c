import { z } from "zod";
import { contextScope, renderTemplates } from "../expr.ts";
import { common, rule, templates } from "./fields.ts";
import { type Executor, failed, type StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("inject"),
    // Optional to zod (which would report it at `/data`): the rule below reports a missing one.
    data: z.unknown().check(templates).optional(),
  }).check(rule((s) =>
    s?.data === undefined
      ? { code: "missing_field", message: "`data` is required in an inject state", hint: "add `data:`" }
      : undefined, true));
export type InjectState = z.infer<ReturnType<typeof schema>>;

/** inject: output = `data` with its `${…}` templates evaluated. */
const execute: Executor<InjectState> = async (step, scope) => {
  try {
    return { kind: "completed", output: await renderTemplates(step.data, contextScope(scope)) };
  } catch (err) {
    return failed("expression_failed", err);
  }
};

export const inject: StepType<InjectState> = {
  type: "inject",
  schema,
  executor: execute,
};
