import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { StartTestRunBody, TestRun, TestRunIdParam, TestRunList } from "../../contract/tests.ts";
import { StationError } from "../../errors.ts";
import type { StationContext } from "../../context.ts";
import { errors, json, openapi, router } from "../openapi.ts";

/** POST/GET /api/v1/tests: run a test suite against this station, and its results as a resource. */

const tags = ["tests"];
const start = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Run test cases (docs/testing.md) against this station: answers the finished run, or at once",
  request: { body: { content: { "application/json": { schema: StartTestRunBody } } } },
  responses: {
    201: json(TestRun, "the finished test run (with wait: true, the default)"),
    202: json(TestRun, "the test run, started (wait: false): poll GET /api/v1/tests/{id}"),
    ...errors(
      "invalid_json",
      "invalid_request",
      "no_test_files",
      "invalid_test_file",
      "environment_not_found",
    ),
  },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "The station's last test runs, newest first (kept in memory, the last 50)",
  responses: { 200: json(TestRunList, "the test runs") },
});
const show = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "A test run with its cases, their failures and the workflow coverage",
  request: { params: TestRunIdParam },
  responses: { 200: json(TestRun, "the test run"), ...errors("test_run_not_found") },
});

/** /api/v1/tests; `api` is the app itself, which the cases call in-process. */
export function testRoutes(
  ctx: StationContext,
  api: (req: Request) => Response | Promise<Response>,
): OpenAPIHono {
  const app = router();
  openapi(app, start, async (c) => {
    const body = c.req.valid("json");
    const { run, done } = await ctx.tests.start(ctx, body, api);
    if (!body.wait) {
      done.catch(() => undefined);
      return c.json(run, 202);
    }
    return c.json(await done, 201);
  });
  openapi(app, list, (c) => c.json({ runs: ctx.tests.list() }, 200));
  openapi(app, show, (c) => {
    const run = ctx.tests.get(c.req.valid("param").id);
    if (!run) throw new StationError("test_run_not_found", "no test run with that id", { status: 404 });
    return c.json(run, 200);
  });
  return app;
}
