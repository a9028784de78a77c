/** The contract of /api/v1/workflow-approvals: approvals, their lists and decisions. */

import { z } from "zod";

export const ApprovalStatus = z.enum(["pending", "approved", "rejected", "timed_out", "canceled"]);

/** A human approval a run waits on. */
export const Approval = z.looseObject({
  id: z.string(),
  run_id: z.string(),
  step_id: z.string(),
  message: z.string(),
  approvers: z.array(z.string()),
  status: ApprovalStatus,
  decided_by: z.string().nullable(),
  comment: z.string().nullable(),
  decided_at: z.string().nullable(),
  timeout_at: z.string(),
  created_at: z.string(),
}).meta({ id: "Approval" });
export type Approval = z.infer<typeof Approval>;

export const ApprovalList = z.looseObject({ approvals: z.array(Approval) }).meta({ id: "ApprovalList" });

/** GET /api/v1/workflow-approvals */
export const ApprovalListQuery = z.object({
  run_id: z.string().optional(),
  status: ApprovalStatus.optional(),
});
export type ApprovalListQuery = z.input<typeof ApprovalListQuery>;

/** POST /api/v1/workflow-approvals/{id}/approve|reject; the actor defaults to X-Approver-Id, then "api". */
export const DecisionBody = z.strictObject({
  actor: z.string().min(1).optional(),
  comment: z.string().optional(),
}).meta({ id: "DecisionBody" });
export type DecisionBody = z.infer<typeof DecisionBody>;

export const ApprovalIdParam = z.object({ id: z.string().min(1) });
