/** GET /api/v1/evals/{eval_id}/report: an eval run's report as a self-contained HTML page or as Markdown. */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { EvalIdParam } from "../../contract/evals.ts";
import type { StationContext } from "../../context.ts";
import { evalReportHtml } from "../../reports/eval_html.tsx";
import { evalReportMarkdown } from "../../reports/eval_markdown.ts";
import { errors, openapi, router } from "../openapi.ts";

const ReportQuery = z.object({
  format: z.enum(["html", "md"]).default("html").describe(
    "html: one self-contained page (no script, no external asset); md: GitHub-flavoured Markdown",
  ),
});

const report = createRoute({
  method: "get",
  path: "/{eval_id}/report",
  tags: ["evals"],
  summary: "An eval run's report: aggregates, score charts, tool effectiveness, each case's drill-down",
  request: { params: EvalIdParam, query: ReportQuery },
  responses: {
    200: {
      description: "the report (what `stn eval report` writes)",
      content: { "text/html": { schema: z.string() }, "text/markdown": { schema: z.string() } },
    },
    ...errors("invalid_request", "eval_not_found"),
  },
});

/** /api/v1/evals/{eval_id}/report */
export function evalReportRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, report, async (c) => {
    const run = ctx.evals.view(c.req.valid("param").eval_id);
    return c.req.valid("query").format === "md"
      ? c.body(evalReportMarkdown(run), 200, { "content-type": "text/markdown; charset=utf-8" })
      : c.body(await evalReportHtml(run), 200, { "content-type": "text/html; charset=utf-8" });
  });
  return app;
}
