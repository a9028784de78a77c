/** /api/v1/evals and /api/v1/eval-datasets: eval runs (start, list, one, compare) and datasets (list, generate). */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  EvalCompare,
  EvalCompareQuery,
  EvalDatasetList,
  EvalDatasetQuery,
  EvalIdParam,
  EvalListQuery,
  EvalRun,
  EvalRunList,
  GenerateDatasetBody,
  GeneratedDataset,
  StartEvalBody,
  StartEvalQuery,
} from "../../contract/evals.ts";
import type { StationContext } from "../../context.ts";
import { errors, json, openapi, router } from "../openapi.ts";

const tags = ["evals"];
const start = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Run a dataset against an agent or workflow, each case an ordinary run, scored (docs/evals.md)",
  request: { query: StartEvalQuery, body: { content: { "application/json": { schema: StartEvalBody } } } },
  responses: {
    201: json(EvalRun, "the eval run: started, or ended with ?wait=1"),
    ...errors(
      "invalid_json",
      "invalid_request",
      "eval_target_not_found",
      "eval_dataset_invalid",
      "eval_dataset_not_found",
      "eval_not_found",
      "model_api_key_missing",
      "model_provider_unknown",
    ),
  },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "Eval runs, newest first, a page at a time (without their cases)",
  request: { query: EvalListQuery },
  responses: { 200: json(EvalRunList, "one page of eval runs"), ...errors("invalid_request") },
});
const compare = createRoute({
  method: "get",
  path: "/compare",
  tags,
  summary: "Compare two eval runs: per-scorer deltas and the cases that got worse",
  request: { query: EvalCompareQuery },
  responses: { 200: json(EvalCompare, "the comparison"), ...errors("invalid_request", "eval_not_found") },
});
const show = createRoute({
  method: "get",
  path: "/{eval_id}",
  tags,
  summary: "An eval run with its aggregates and each case (its run id, answer, scores, tool calls)",
  request: { params: EvalIdParam },
  responses: { 200: json(EvalRun, "the eval run"), ...errors("eval_not_found") },
});
const datasets = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "The dataset files of an environment's evals/ folder",
  request: { query: EvalDatasetQuery },
  responses: { 200: json(EvalDatasetList, "the datasets"), ...errors("invalid_request") },
});
const generate = createRoute({
  method: "post",
  path: "/generate",
  tags,
  summary: "Have the model write test cases for an agent, to review and save (nothing runs)",
  request: { body: { content: { "application/json": { schema: GenerateDatasetBody } } } },
  responses: {
    200: json(GeneratedDataset, "the cases"),
    ...errors(
      "invalid_json",
      "invalid_request",
      "agent_not_found",
      "eval_generate_failed",
      "model_api_key_missing",
      "model_provider_unknown",
    ),
  },
});

/** /api/v1/evals */
export function evalRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, start, async (c) => {
    const started = await ctx.evals.start(ctx, c.req.valid("json"));
    const wait = ["1", "true"].includes(c.req.valid("query").wait ?? "");
    await ctx.durable();
    return c.json(wait ? await ctx.evals.wait(started.eval_id, c.req.raw.signal) : started, 201);
  });
  openapi(app, list, (c) => {
    const q = c.req.valid("query");
    const rows = ctx.evals.ledger.list(q);
    return c.json({
      evals: rows.map((r) => ctx.evals.view(r.id, false)),
      next_cursor: rows.length === q.limit ? rows[rows.length - 1].id : null,
    }, 200);
  });
  openapi(app, compare, (c) => {
    const q = c.req.valid("query");
    return c.json(ctx.evals.compare(q.base, q.head, q.max_regression), 200);
  });
  openapi(app, show, (c) => c.json(ctx.evals.view(c.req.valid("param").eval_id), 200));
  return app;
}

/** /api/v1/eval-datasets */
export function evalDatasetRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, datasets, async (c) => {
    return c.json({ datasets: await ctx.evals.datasets(ctx, c.req.valid("query").environment) }, 200);
  });
  openapi(app, generate, async (c) => c.json(await ctx.evals.generate(ctx, c.req.valid("json")), 200));
  return app;
}
