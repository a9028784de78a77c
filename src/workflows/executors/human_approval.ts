import type { z } from "zod";
import type { HumanApprovalState } from "../definition/schema.ts";
import { contextScope, renderString } from "../expr.ts";
import { parseDuration } from "../../lib/duration.ts";
import { type Executor, failed } from "./types.ts";

const DEFAULT_TIMEOUT_MS = 3_600_000;

/** human_approval: parks the step until approve / reject / its timeout (default 1h). */
export const humanApproval: Executor<z.infer<typeof HumanApprovalState>> = async (step, scope) => {
  try {
    const message = String(await renderString(step.message, contextScope(scope)));
    const timeoutMs = step.timeout ? parseDuration(step.timeout)! : DEFAULT_TIMEOUT_MS;
    return { kind: "approval", message, approvers: step.approvers ?? [], timeoutMs };
  } catch (err) {
    return failed("expression_failed", err);
  }
};
