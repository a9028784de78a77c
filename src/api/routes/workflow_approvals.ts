import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  Approval,
  ApprovalIdParam,
  ApprovalList,
  ApprovalListQuery,
  DecisionBody,
} from "../../contract/approvals.ts";
import { notFound } from "../../errors.ts";
import type { StationContext } from "../../context.ts";
import { approvalView } from "../../workflows/engine/mod.ts";
import { errors, json, openapi, router } from "../openapi.ts";

const tags = ["approvals"];
const listApprovals = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List approvals, oldest first",
  request: { query: ApprovalListQuery },
  responses: { 200: json(ApprovalList, "the approvals"), ...errors("invalid_request") },
});
const getApproval = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "An approval",
  request: { params: ApprovalIdParam },
  responses: { 200: json(Approval, "the approval"), ...errors("approval_not_found") },
});
const decide = (verb: "approve" | "reject") =>
  createRoute({
    method: "post",
    path: `/{id}/${verb}`,
    tags,
    summary: `${verb === "approve" ? "Approve" : "Reject"} (actor: body, else X-Approver-Id, else "api")`,
    request: {
      params: ApprovalIdParam,
      body: { content: { "application/json": { schema: DecisionBody } } },
    },
    responses: {
      200: json(Approval, "the decided approval"),
      ...errors("invalid_json", "invalid_request", "approval_not_found", "approval_decided"),
    },
  });

/** /api/v1/workflow-approvals: list, read and decide human approvals. */
export function workflowApprovalRoutes(ctx: StationContext): OpenAPIHono {
  const engine = ctx.engine;
  const app = router();

  openapi(app, listApprovals, (c) => {
    const q = c.req.valid("query");
    return c.json({ approvals: ctx.runs.approvals({ runId: q.run_id, status: q.status }) }, 200);
  });

  openapi(app, getApproval, (c) => {
    const { id } = c.req.valid("param");
    const approval = ctx.runs.approval(id);
    if (!approval) throw notFound("approval", id, "list them with `stn workflow approvals list`");
    return c.json(approval, 200);
  });

  for (const verb of ["approve", "reject"] as const) {
    openapi(app, decide(verb), async (c) => {
      const body = c.req.valid("json");
      const actor = body.actor ?? c.req.header("x-approver-id") ?? "api";
      const row = await engine.decide(c.req.valid("param").id, verb === "approve", actor, body.comment);
      return c.json(approvalView(row), 200);
    });
  }
  return app;
}
