import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { StationError, toStationError } from "../errors.ts";
import { log } from "../log.ts";
import type { StationContext } from "../context.ts";
import { requiredToken, requireToken } from "../server/auth.ts";
import { requestBodyLimit } from "./body_limit.ts";
import { bundleRoutes } from "./routes/bundles.ts";
import { agentRoutes } from "./routes/agents.ts";
import { agentRunRoutes, agentRunStartRoutes } from "./routes/agent_runs.ts";
import { observeRequests } from "./observe.ts";
import { bodyFailure } from "../server/socket_answer.ts";
import { allowHosts, hostRule, refuseCrossSite } from "../server/origin.ts";
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
  const app = new OpenAPIHono();
  app.use("*", ...observeRequests());
  const token = requiredToken(ctx.config.values.server);
  // Before the token: a page rebinding its name to this machine is refused whether or not a token is needed.
  const hosts = hostRule(ctx.config.values.server);
  app.use("*", refuseCrossSite(hosts), allowHosts(hosts));
  if (token) app.use("*", requireToken(token));
  app.use("*", requestBodyLimit(ctx.config.values.server.max_body_bytes));
  // With `ledger.durability: fsync`, nothing is answered before the commits it may show are on disk. A
  // read shows what was committed before it, so that is synced first and its answer (maybe a stream
  // already flowing, which a wait after it would race) goes out as soon as it is ready; a write's
  // own commits are synced before it is answered.
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      await ctx.durable();
      return next();
    }
    await next();
    await ctx.durable();
  });

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

  app.notFound((c) => {
    const err = new StationError("not_found", `no route for ${c.req.method} ${c.req.path}`, {
      hint: "the API reference lists every route: GET /api/docs, or /api/v1/openapi.json",
    });
    return c.json(err.toBody(), 404);
  });
  app.onError((thrown, c) => {
    // A middleware's own answer (bearer auth's 401 with WWW-Authenticate) goes out as it was made.
    if (thrown instanceof HTTPException && thrown.res) return thrown.getResponse();
    // A body the client cut off or sent malformed is its mistake: the answer it got, not a 500.
    const failed = bodyFailure(c);
    if (failed) return c.json(failed.toBody(), failed.status as 400);
    const err = thrown instanceof HTTPException
      ? new StationError("http_error", thrown.message || `HTTP ${thrown.status}`, { status: thrown.status })
      : toStationError(thrown);
    // Expected conditions (a full bucket is 507, a part down is 503) are answers, not server faults.
    if (!(thrown instanceof StationError) || err.status === 500) {
      log.error(`${c.req.method} ${c.req.path} failed`, { code: err.code, error: err.message });
    }
    return c.json(err.toBody(), err.status as 500);
  });
  return app;
}
