import type { OpenAPIHono } from "@hono/zod-openapi";
import { answerErrors, apiBase } from "./base.ts";
import type { StationContext } from "../context.ts";
import { bundleRoutes } from "./routes/bundles.ts";
import { agentRoutes } from "./routes/agents.ts";
import { agentRunRoutes, agentRunStartRoutes } from "./routes/agent_runs.ts";
import { docsRoutes } from "./routes/docs.ts";
import { eventRoutes, hookRoutes, signalRoutes } from "./routes/events.ts";
import { environmentRoutes } from "./routes/environments.ts";
import { filesRoutes } from "./routes/files.ts";
import { healthRoutes, versionRoutes } from "./routes/health.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { sandboxRoutes } from "./routes/sandboxes.ts";
import { testRoutes } from "./routes/tests.ts";
import { evalDatasetRoutes, evalRoutes } from "./routes/evals.ts";
import { evalReportRoutes } from "./routes/eval_reports.ts";
import { workerRoutes } from "./routes/workers.ts";
import { workflowApprovalRoutes } from "./routes/workflow_approvals.ts";
import { addWorkflowStartRoute, workflowRunRoutes } from "./routes/workflow_runs.ts";
import { syncRoutes, workflowRoutes } from "./routes/workflows.ts";
import { dashboardRoutes } from "../ui/mod.ts";

/** Builds the HTTP API: request ids, access log, spans and metrics, error shape, auth, body limits, every resource's routes, and the OpenAPI document of them. */
export function createApp(ctx: StationContext): OpenAPIHono {
  const { app, token } = apiBase(ctx);
  const workflows = workflowRoutes(ctx);
  addWorkflowStartRoute(ctx, workflows);

  app.route("/health", healthRoutes(ctx));
  app.route("/metrics", metricsRoutes(ctx));
  app.route("/api/v1/files", filesRoutes(ctx));
  app.route("/api/v1/workflow-runs", workflowRunRoutes(ctx));
  app.route("/api/v1/workflow-runs", signalRoutes(ctx));
  app.route("/api/v1/events", eventRoutes(ctx));
  app.route("/api/v1/hooks", hookRoutes(ctx));
  app.route("/api/v1/workflow-approvals", workflowApprovalRoutes(ctx));
  app.route("/api/v1/workflows", workflows);
  app.route("/api/v1/agents", agentRunStartRoutes(ctx));
  app.route("/api/v1/agent-runs", agentRunRoutes(ctx));
  app.route("/api/v1/sync", syncRoutes(ctx));
  app.route("/api/v1/workers", workerRoutes(ctx));
  app.route("/api/v1/tests", testRoutes(ctx, (req) => app.fetch(req)));
  app.route("/api/v1/evals", evalRoutes(ctx));
  app.route("/api/v1/evals", evalReportRoutes(ctx));
  app.route("/api/v1/eval-datasets", evalDatasetRoutes(ctx));
  app.route("/api/v1/environments", environmentRoutes(ctx));
  app.route("/api/v1/bundles", bundleRoutes(ctx));
  app.route("/api/v1/agents", agentRoutes(ctx));
  app.route("/api/v1/version", versionRoutes(ctx));
  app.route("/api/v1", sandboxRoutes(ctx));
  app.route("/", docsRoutes(app, ctx.version));
  app.route("/ui", dashboardRoutes(ctx, token));

  answerErrors(app);
  return app;
}
