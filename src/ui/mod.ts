import { type Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import { toStationError } from "../errors.ts";
import { log } from "../log.ts";
import { SESSION_COOKIE, validSession } from "../lib/session.ts";
import type { StationContext } from "../context.ts";
import { addAssetRoutes } from "./assets.ts";
import { addLoginRoutes, dashboardGuard } from "./guard.tsx";
import { errorPage } from "./error_page.tsx";
import { addAgentRunRoutes } from "./pages/agent_run.tsx";
import { addAgentRunListRoutes } from "./pages/agent_runs.tsx";
import { addApprovalRoutes } from "./pages/approvals.tsx";
import { addFileRoutes } from "./pages/files.tsx";
import { addRunRoutes } from "./pages/run.tsx";
import { addRunListRoutes } from "./pages/runs.tsx";
import { addSandboxRoutes } from "./pages/sandboxes.tsx";
import { addTestRoutes } from "./pages/tests.tsx";
import { addEvalRoutes } from "./pages/evals.tsx";
import { addWorkflowRoutes } from "./pages/workflows.tsx";

/**
 * The dashboard, mounted at /ui: server-rendered pages that read through the same services as the API
 * routes, and forms whose script sends changes to the API itself (docs/dashboard.md). `token` is the
 * API token when one is required (off loopback): then a login page exchanges it for a session cookie.
 */
export function dashboardRoutes(ctx: StationContext, token: string | undefined): Hono {
  const ui = new Hono();
  const page = (c: Context) => ({
    loggedIn: token !== undefined && validSession(token, getCookie(c, SESSION_COOKIE)),
  });
  // Our own script and style only; no framing (clickjacking the buttons); forms post only to stn itself.
  // Inline style attributes are allowed: the step timeline positions its bars with them.
  ui.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", "data:"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    }),
  );
  ui.use("*", dashboardGuard(token));
  addAssetRoutes(ui);
  addLoginRoutes(ui, token);
  ui.get("/", (c) => c.redirect("/ui/runs", 303));
  addRunListRoutes(ui, ctx, page);
  addRunRoutes(ui, ctx, page);
  addAgentRunListRoutes(ui, ctx, page);
  addAgentRunRoutes(ui, ctx, page);
  addApprovalRoutes(ui, ctx, page);
  addWorkflowRoutes(ui, ctx, page);
  addFileRoutes(ui, ctx, page);
  addSandboxRoutes(ui, ctx, page);
  addTestRoutes(ui, ctx, page);
  addEvalRoutes(ui, ctx, page);
  // A catch-all rather than notFound(): a mounted app's notFound gives way to the API's JSON one.
  ui.all(
    "*",
    (c) =>
      c.html(
        errorPage(page(c), { status: 404, code: "not_found", message: `no dashboard page at ${c.req.path}` }),
        404,
      ),
  );
  ui.onError((thrown, c) => {
    const err = toStationError(thrown);
    if (err.status >= 500) {
      log.error(`${c.req.method} ${c.req.path} failed`, { code: err.code, error: err.message });
    }
    return c.html(errorPage(page(c), err), err.status as 500);
  });
  return ui;
}
