import { Hono } from "hono";
import { z } from "zod";
import { StationError } from "../../errors.ts";
import type { StationContext } from "../../runtime/context.ts";
import { approvalView } from "../../workflows/engine/views.ts";
import { parseWith, readJson } from "../validate.ts";

const Decision = z.strictObject({ actor: z.string().min(1).optional(), comment: z.string().optional() });
const ListQuery = z.object({
  run_id: z.string().optional(),
  status: z.enum(["pending", "approved", "rejected", "timed_out", "canceled"]).optional(),
});

/** /api/v1/workflow-approvals: list, read and decide human approvals. */
export function workflowApprovalRoutes(ctx: StationContext): Hono {
  const engine = ctx.engine;
  const app = new Hono();

  app.get("/", (c) => {
    const q = parseWith(ListQuery, c.req.query(), "query");
    const rows = engine.reads.approvals.list({ runId: q.run_id, status: q.status });
    return c.json({ approvals: rows.map(approvalView) });
  });

  app.get("/:id", (c) => {
    const row = engine.reads.approvals.get(c.req.param("id"));
    if (!row) {
      throw new StationError("approval_not_found", `no approval ${c.req.param("id")}`, {
        status: 404,
        hint: "list them with `stn workflow approvals list`",
      });
    }
    return c.json(approvalView(row));
  });

  for (const verb of ["approve", "reject"] as const) {
    app.post(`/:id/${verb}`, async (c) => {
      const body = await readJson(c, Decision);
      const actor = body.actor ?? c.req.header("x-approver-id") ?? "api";
      const row = await engine.decide(c.req.param("id"), verb === "approve", actor, body.comment);
      return c.json(approvalView(row));
    });
  }
  return app;
}
