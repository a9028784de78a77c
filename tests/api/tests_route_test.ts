import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { ROUTE_WORKFLOW, writeEnvironment } from "../helpers/test_env.ts";
import { connectHttp, startMcpStation, toolJson } from "../mcp/helpers.ts";

const SUITE = `cases:
  - name: small
    workflow: route
    input: { n: 1 }
    expect: { output: { size: small } }
  - name: big, rejected
    workflow: route
    input: { n: 20 }
    approvals: { check: { decision: reject, comment: not today } }
    expect: { steps: [pick, big, check, rejected] }
`;

Deno.test("POST /api/v1/tests runs a suite on the station; the run is a resource, an MCP tool and a dashboard page", async () => {
  const home = await tempHome();
  await writeEnvironment(home.home, {
    "workflows/route.workflow.yaml": ROUTE_WORKFLOW,
    "tests/route.test.yaml": SUITE,
  });
  const s = await startMcpStation({ home });
  const api = (path: string, init?: RequestInit) => fetch(new URL(path, s.station.url), init);
  const post = (body: unknown) =>
    api("/api/v1/tests", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const mcp = await connectHttp(s.mcpUrl);
  try {
    // The environment's own tests/ folder.
    const res = await post({});
    assertEquals(res.status, 201);
    const run = await res.json();
    assertEquals(run.status, "passed", JSON.stringify(run.cases));
    assertEquals(run.summary, { total: 2, passed: 2, failed: 0 });
    assertEquals(run.coverage[0].taken, ["pick→case 0", "pick→default", "check→onReject"]);

    const shown = await (await api(`/api/v1/tests/${run.id}`)).json();
    assertEquals(shown.id, run.id);
    assertEquals((await (await api("/api/v1/tests")).json()).runs[0].id, run.id);
    const missing = await api("/api/v1/tests/nope");
    assertEquals(missing.status, 404);
    assertEquals((await missing.json()).error.code, "test_run_not_found");

    // Files sent in the body; a failing case is a failed run, an invalid file a 400 naming line and column.
    const failing = await (await post({
      files: [{
        path: "t/x.test.yaml",
        text: "cases:\n  - name: off\n    workflow: route\n    expect: { steps: [pick] }\n",
      }],
    })).json();
    assertEquals(failing.status, "failed");
    assertEquals(failing.cases[0].failures[0].assertion, "steps");
    const invalid = await post({
      files: [{ path: "t/x.test.yaml", text: "cases:\n  - name: off\n    wrkflow: route\n" }],
    });
    assertEquals(invalid.status, 400);
    const err = (await invalid.json()).error;
    assertEquals(err.code, "invalid_test_file");
    assertEquals(err.details[0].errors[0].line, 2);

    // The test file's schema is published in the OpenAPI document with the API's own.
    const doc = await (await api("/api/v1/openapi.json")).json();
    const fileSchema = doc.components.schemas.TestFile;
    assertEquals(fileSchema.required, ["cases"]);
    assertEquals(fileSchema.properties.cases.items, { $ref: "#/components/schemas/TestCase" });
    assert(
      doc.components.schemas.WorkflowTestCase && doc.components.schemas.AgentTestCase,
      "the case schemas",
    );

    // The MCP tool is the same call.
    const viaMcp = toolJson(await mcp.callTool({ name: "run_tests", arguments: { filter: "small" } }));
    assertEquals(viaMcp.summary, { total: 1, passed: 1, failed: 0 });
    const got = toolJson(await mcp.callTool({ name: "get_test_run", arguments: { id: viaMcp.id } }));
    assertEquals(got.id, viaMcp.id);

    // The dashboard lists the runs and shows one run's cases with their failures.
    const list = await (await api("/ui/tests")).text();
    assertStringIncludes(list, `/ui/tests/${failing.id}`);
    const detail = await (await api(`/ui/tests/${failing.id}`)).text();
    assertStringIncludes(detail, "x.test.yaml › off");
    assertStringIncludes(detail, "the run took another path");
    assert(detail.includes("Workflow coverage"));
  } finally {
    await mcp.close();
    await s.close();
    await home.cleanup();
  }
});
