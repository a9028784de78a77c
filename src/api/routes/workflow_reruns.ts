import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  BulkRetryBody,
  BulkRetryResult,
  EvalBody,
  EvalResult,
  ForkBody,
  RetryBody,
} from "../../contract/reruns.ts";
import { Run, RunIdParam } from "../../contract/runs.ts";
import type { StationContext } from "../../context.ts";
import { bulkRetry, evalAgainstRun, forkWorkflowRun, retryWorkflowRun } from "../../workflows/reruns.ts";
import type { WorkflowServices } from "../../workflows/service.ts";
import { errors, json, openapi } from "../openapi.ts";

/** Repairing runs (docs/workflows.md#retry-fork-and-re-run): retry, fork, bulk retry, and eval against a run. */

const tags = ["runs"];
const body = <T>(schema: T) => ({ content: { "application/json": { schema } } });
const definitionErrors = [
  "invalid_request",
  "run_not_found",
  "invalid_definition",
  "definition_incompatible",
  "workflow_version_not_found",
  "workflow_disabled",
] as const;

const retry = createRoute({
  method: "post",
  path: "/{run_id}/retry",
  tags,
  summary: "Retry a failed or canceled run from the step it stopped at (the same run goes on; run_retried)",
  description: "Completed steps are not run again; the step it stopped at and what follows run with the " +
    "definition given (`version` or `definition`), else the workflow's latest version, else the run's own.",
  request: { params: RunIdParam, body: body(RetryBody) },
  responses: {
    200: json(Run, "the run, running again"),
    ...errors(...definitionErrors, "run_not_retryable"),
  },
});
const fork = createRoute({
  method: "post",
  path: "/{run_id}/fork",
  tags,
  summary: "Fork a run from a step: a new run that reuses the parent's completed steps before it",
  request: { params: RunIdParam, body: body(ForkBody) },
  responses: {
    201: json(Run, "the new run (parent_run_id, forked_from)"),
    ...errors(...definitionErrors, "step_not_in_run", "input_invalid", "expression_failed"),
  },
});
const bulk = createRoute({
  method: "post",
  path: "/retry",
  tags,
  summary: "Retry every run of a workflow that failed within a window, each once (dry_run lists them)",
  request: { body: body(BulkRetryBody) },
  responses: {
    200: json(BulkRetryResult, "each matched run and what was done with it"),
    ...errors("invalid_request", "workflow_not_found"),
  },
});
const evalRoute = createRoute({
  method: "post",
  path: "/{run_id}/eval",
  tags,
  summary: "Evaluate a JSONata expression against the data a step of the run saw (or a given input)",
  request: { params: RunIdParam, body: body(EvalBody) },
  responses: {
    200: json(EvalResult, "the value"),
    ...errors(
      "invalid_request",
      "run_not_found",
      "step_not_in_run",
      "expression_invalid",
      "expression_failed",
      "expression_timeout",
    ),
  },
});

/** Adds retry, fork, bulk retry and eval to the /api/v1/workflow-runs router. */
export function addRerunRoutes(ctx: WorkflowServices & Pick<StationContext, "runs">, app: OpenAPIHono): void {
  openapi(app, bulk, async (c) => c.json(await bulkRetry(ctx, c.req.valid("json")), 200));
  openapi(app, retry, async (c) => {
    const run = await retryWorkflowRun(ctx, c.req.valid("param").run_id, c.req.valid("json"));
    return c.json(ctx.runs.view(run), 200);
  });
  openapi(app, fork, async (c) => {
    const run = await forkWorkflowRun(ctx, c.req.valid("param").run_id, c.req.valid("json"));
    return c.json(ctx.runs.view(run), 201);
  });
  openapi(app, evalRoute, async (c) => {
    const result = await evalAgainstRun(ctx, c.req.valid("param").run_id, c.req.valid("json"));
    return c.json(result, 200);
  });
}
