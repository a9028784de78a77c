import type { z } from "zod";
import type { InjectState } from "../definition/schema.ts";
import { render } from "../engine/eval.ts";
import { type Executor, failed } from "./types.ts";

/** inject: output = `data` with its `${…}` templates evaluated. */
export const inject: Executor<z.infer<typeof InjectState>> = async (step, scope) => {
  try {
    return { kind: "completed", output: await render(step.data, scope) };
  } catch (err) {
    return failed("template_error", err);
  }
};
