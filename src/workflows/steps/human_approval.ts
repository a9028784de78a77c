import { z } from "zod";
import { parseDuration } from "../../lib/duration.ts";
import { contextScope, renderString } from "../expr.ts";
import { common, Duration, stateId, templates } from "./fields.ts";
import { type Executor, failed, type StepType } from "./types.ts";

const DEFAULT_TIMEOUT_MS = 3_600_000;

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("human_approval"),
    message: z.string().min(1).check(templates),
    approvers: z.array(z.string()).optional(),
    timeout: Duration.optional(), // default 1h, applied by the executor
    onReject: stateId().optional(),
    onTimeout: stateId().optional(),
  });
export type HumanApprovalState = z.infer<ReturnType<typeof schema>>;

/** human_approval: parks the step until approve / reject / its timeout (default 1h). */
const execute: Executor<HumanApprovalState> = async (step, scope) => {
  try {
    const message = String(await renderString(step.message, contextScope(scope)));
    const timeoutMs = step.timeout ? parseDuration(step.timeout)! : DEFAULT_TIMEOUT_MS;
    return { kind: "approval", message, approvers: step.approvers ?? [], timeoutMs };
  } catch (err) {
    return failed("expression_failed", err);
  }
};

export const humanApproval: StepType<HumanApprovalState> = {
  type: "human_approval",
  schema,
  waits: true,
  targets: [["onReject"], ["onTimeout"]],
  // A decision with no route of its own ends the block (reject/timeout without a target fail the run).
  canExit: (s) => s.onReject === undefined || s.onTimeout === undefined || s.next === undefined,
  notes: (s) =>
    Array.isArray(s.approvers) && s.approvers.length > 0
      ? [{
        code: "approvers_not_enforced",
        message: "`approvers` is stored and shown, but not enforced: anyone who can call the API may decide",
        hint: "restrict who reaches the API (server.api_token) until stn has users",
        at: ["approvers"],
      }]
      : [],
  // Approved: on to `next`; rejected or timed out: to onReject / onTimeout, else the step fails.
  approval: {
    decided: (s, d) =>
      d.approved
        ? { kind: "completed", output: d }
        : s.onReject
        ? { kind: "completed", output: d, next: s.onReject }
        : { kind: "failed", error: { code: "approval_rejected", message: `rejected by ${d.decided_by}` } },
    timedOut: (s, d) =>
      s.onTimeout ? { kind: "completed", output: d, next: s.onTimeout } : {
        kind: "failed",
        error: { code: "approval_timed_out", message: "no decision before the approval timed out" },
      },
  },
  executor: execute,
};
