import type { z } from "zod";
import type { InjectState } from "../definition/schema.ts";
import { contextScope, renderTemplates } from "../expr.ts";
import { type Executor, failed } from "./types.ts";

/** inject: output = `data` with its `${…}` templates evaluated. */
export const inject: Executor<z.infer<typeof InjectState>> = async (step, scope) => {
  try {
    return { kind: "completed", output: await renderTemplates(step.data, contextScope(scope)) };
  } catch (err) {
    return failed("expression_failed", err);
  }
};
