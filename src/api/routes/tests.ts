import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { resolve } from "node:path";
import { StationClient } from "../../client/http.ts";
import { StartTestRunBody, TestRun, TestRunIdParam, TestRunList } from "../../contract/tests.ts";
import { StationError } from "../../errors.ts";
import type { StationContext } from "../../runtime/context.ts";
import { environmentTestFiles, loadTestFiles, type ReadText, TEST_FILE } from "../../testing/load.ts";
import { newTestRun, runSuite } from "../../testing/suite.ts";
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

/** Where the body's files live: a folder that is nowhere on disk, so paths resolve but never read the disk. */
const BODY_ROOT = "/stn-test-body";

/** The test files to load and how to read them (and the cassettes they name): the body's, or the environment's. */
async function sources(
  ctx: StationContext,
  environment: string,
  files?: Array<{ path: string; text: string }>,
) {
  if (files) {
    const byPath = new Map(files.map((f) => [resolve(BODY_ROOT, f.path), f.text]));
    const read: ReadText = (p) => {
      const text = byPath.get(resolve(BODY_ROOT, p));
      if (text === undefined) {
        return Promise.reject(new StationError("file_not_found", `${p} is not among the files sent`));
      }
      return Promise.resolve(text);
    };
    const tests = files.map((f) => f.path).filter((p) => TEST_FILE.test(p));
    return { paths: tests, read, base: BODY_ROOT };
  }
  const dir = resolve(ctx.config.paths.environments, environment);
  const read: ReadText = (p) => Deno.readTextFile(p);
  return { paths: await environmentTestFiles(dir), read, base: dir };
}

/** /api/v1/tests; `api` is the app itself, which the cases call in-process. */
export function testRoutes(
  ctx: StationContext,
  api: (req: Request) => Response | Promise<Response>,
): OpenAPIHono {
  const app = router();
  openapi(app, start, async (c) => {
    const body = c.req.valid("json");
    const environment = body.environment ?? ctx.config.values.workflows.environment;
    const { paths, read, base } = await sources(ctx, environment, body.files);
    if (paths.length === 0) {
      throw new StationError("no_test_files", `no test files for environment ${environment}`, {
        status: 400,
        hint: "send `files`, or write environments/<env>/tests/*.test.yaml on the station (docs/testing.md)",
      });
    }
    const suite = await loadTestFiles(paths, read, base);
    if (suite.invalid.length) {
      throw new StationError("invalid_test_file", `${suite.invalid.length} test file(s) do not validate`, {
        status: 400,
        hint: "fix each issue at its file:line:col (details); `stn test` shows them too",
        details: suite.invalid,
      });
    }
    const client = new StationClient("http://stn.internal", {
      token: ctx.config.values.server.api_token,
      timeoutMs: 10 * 60_000,
      fetch: async (input, init) => await api(new Request(input, init)),
    });
    const run = newTestRun(environment, suite);
    ctx.tests.add(run);
    // A running station keeps the wall clock: every case runs in real time here (docs/testing.md).
    const target = { client, ctx, environment, caseTimeoutMs: 120_000, read };
    const done = runSuite({ main: target }, suite, run, {
      filter: body.filter,
      parallel: body.parallel ?? 2,
      bail: body.bail,
    });
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
