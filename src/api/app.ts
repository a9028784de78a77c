import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { StationError, toStationError } from "../errors.ts";
import { log } from "../log.ts";
import type { StationContext } from "../runtime/context.ts";
import { bearerAuth, requiredToken } from "./auth.ts";
import { requestBodyLimit } from "./body_limit.ts";
import { filesRoutes } from "./routes/files.ts";
import { healthRoutes } from "./routes/health.ts";
import { sandboxRoutes } from "./routes/sandboxes.ts";
import { workflowApprovalRoutes } from "./routes/workflow_approvals.ts";
import { workflowRunRoutes, workflowStartRoutes } from "./routes/workflow_runs.ts";
import { syncRoutes, workflowRoutes } from "./routes/workflows.ts";

/** Builds the HTTP API: error shape, auth, and every resource's routes. */
export function createApp(ctx: StationContext): Hono {
  const app = new Hono();
  const token = requiredToken(ctx.config.values.server);
  if (token) app.use("*", bearerAuth(token));
  app.use("*", requestBodyLimit(ctx.config.values.server.max_body_bytes));

  app.route("/health", healthRoutes(ctx));
  app.route("/api/v1/files", filesRoutes(ctx));
  app.route("/api/v1/workflow-runs", workflowRunRoutes(ctx));
  app.route("/api/v1/workflow-approvals", workflowApprovalRoutes(ctx));
  app.route("/api/v1/workflows", workflowRoutes(ctx));
  app.route("/api/v1/workflows", workflowStartRoutes(ctx));
  app.route("/api/v1/sync", syncRoutes(ctx));
  app.get("/api/v1/version", (c) => c.json({ version: ctx.version, deno: Deno.version.deno }));

  app.route("/api/v1", sandboxRoutes(ctx));
  app.notFound((c) => {
    const err = new StationError("not_found", `no route for ${c.req.method} ${c.req.path}`, {
      status: 404,
      hint: "see the API section of the README for the routes",
    });
    return c.json(err.toBody(), 404);
  });
  app.onError((thrown, c) => {
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
