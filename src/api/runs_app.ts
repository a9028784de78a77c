/**
 * The API of a one-shot station (src/runtime/one_shot.ts): the workflow-run routes alone, behind the same
 * middleware as the full API — what `stn workflow run FILE` calls in embedded mode, without loading the
 * rest of the API (agents, files, sandboxes, the dashboard and the OpenAPI document).
 */

import type { OpenAPIHono } from "@hono/zod-openapi";
import { answerErrors, apiBase } from "./base.ts";
import { type RunRoutesContext, workflowRunRoutes } from "./routes/workflow_runs.ts";

/** Builds the one-shot API: /api/v1/workflow-runs (start, read, follow, control). */
export function createRunsApp(ctx: RunRoutesContext): OpenAPIHono {
  const { app } = apiBase(ctx);
  app.route("/api/v1/workflow-runs", workflowRunRoutes(ctx));
  answerErrors(app);
  return app;
}
