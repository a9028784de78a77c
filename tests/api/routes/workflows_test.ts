import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import type { StationError } from "../../../src/errors.ts";
import {
  getWorkflow,
  listWorkflows,
  listWorkflowVersions,
  purgeWorkflow,
  saveWorkflow,
  syncWorkflows,
  validateWorkflow,
} from "../../../src/client/workflows.ts";

const YAML = `id: hello
name: Hello
states:
  - id: greet
    type: inject
    data: {msg: "hi \${name}"}
`;

Deno.test("API: workflows are synced at start, created from JSON or YAML, versioned, validated with 422", async () => {
  const home = await tempHome();
  const dir = home.path("environments", "default", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "boot.workflow.yaml"), "states:\n  - {id: a, type: inject, data: {}}\n");
  await Deno.writeTextFile(join(dir, "bad.workflow.yaml"), "id: bad\nstates:\n  - {id: a, type: nope}\n");
  const t = await startTestStation({ home });
  try {
    const c = t.client;
    // Synced at start: the valid file is there, the invalid one skipped.
    assertEquals((await listWorkflows(c)).map((w) => [w.id, w.source, w.environment]), [[
      "boot",
      "file",
      "default",
    ]]);

    // YAML body
    const res = await c.fetch("POST", "/api/v1/workflows", {
      headers: { "content-type": "application/yaml" },
      body: YAML,
    });
    assertEquals(res.status, 201);
    const created = await res.json();
    assertEquals([created.outcome, created.version], ["created", 1]);

    // Same content as JSON: unchanged (200); changed content: version 2
    const same = await saveWorkflow(c, {
      id: "hello",
      name: "Hello",
      states: [{ id: "greet", type: "inject", data: { msg: "hi ${name}" } }],
    });
    assertEquals([same.outcome, same.version], ["unchanged", 1]);
    const v2 = await c.json<{ version: number }>("PUT", "/api/v1/workflows/hello", {
      body: { states: [{ id: "greet", type: "set", data: { msg: "hello" } }] },
    });
    assertEquals(v2.version, 2);
    assertEquals((await getWorkflow(c, "hello")).version, 2);
    assertEquals((await getWorkflow(c, "hello", 1)).definition.name, "Hello");
    assertEquals((await listWorkflowVersions(c, "hello")).map((v) => v.version), [1, 2]);
    const byPath = await c.json<{ version: number }>("GET", "/api/v1/workflows/hello/versions/1");
    assertEquals(byPath.version, 1);

    // Invalid definition: 422 with the validator's issues; /validate answers with the report.
    const err = await saveWorkflow(c, {
      id: "x",
      states: [{ id: "a", type: "transform", expression: "a == 1" }],
    })
      .catch((e) => e) as StationError;
    assertEquals([err.code, err.status], ["workflow_invalid", 422]);
    const issues = (err.details as { errors: Array<{ code: string; path: string }> }).errors;
    assertEquals(issues.map((i) => [i.code, i.path]), [["invalid_expression", "/states/0/expression"]]);
    assert(err.hint?.includes("=="));
    const report = await validateWorkflow(c, {
      workflowId: "y",
      definition: { states: [{ id: "a", type: "set" }] },
    });
    assertEquals([report.valid, report.errors[0].code], [false, "missing_field"]);
    const yamlReport = await c.fetch("POST", "/api/v1/workflows/validate", {
      headers: { "content-type": "text/yaml" },
      body: "id: z\nstates:\n  - id: a\n    type: inject\n    data: {}\n    nxt: b\n",
    }).then((r) => r.json());
    assertEquals([yamlReport.errors[0].code, yamlReport.errors[0].line], ["unknown_field", 6]);

    // PUT with a different id in the body is refused; unknown workflow is 404.
    const mismatch = await c.json("PUT", "/api/v1/workflows/hello", { body: { id: "other", states: [] } })
      .catch((e) => e) as StationError;
    assertEquals(mismatch.status, 422); // invalid first (empty states)
    const mismatch2 = await c.json("PUT", "/api/v1/workflows/hello", {
      body: { id: "other", states: [{ id: "a", type: "inject", data: {} }] },
    }).catch((e) => e) as StationError;
    assertEquals([mismatch2.code, mismatch2.status], ["workflow_id_mismatch", 400]);
    const missing = await getWorkflow(c, "nope").catch((e) => e) as StationError;
    assertEquals([missing.code, missing.status], ["workflow_not_found", 404]);
    const badVersion = await c.json("GET", "/api/v1/workflows/hello", { query: { version: "x" } })
      .catch((e) => e) as StationError;
    assertEquals([badVersion.code, badVersion.status], ["invalid_request", 400]);

    // DELETE disables; ?purge=true deletes.
    const disabled = await c.json<{ workflow: { status: string } }>("DELETE", "/api/v1/workflows/hello");
    assertEquals(disabled.workflow.status, "disabled");
    assertEquals((await listWorkflows(c, "disabled")).map((w) => w.id), ["hello"]);
    await purgeWorkflow(c, "hello");
    assertEquals((await listWorkflows(c)).map((w) => w.id), ["boot"]);

    // POST /api/v1/sync after removing the file disables it.
    await Deno.remove(join(dir, "boot.workflow.yaml"));
    const sync = await syncWorkflows(c);
    assertEquals([sync.disabled, sync.invalid.map((i) => i.errors[0].code)], [["boot"], ["unknown_type"]]);
    const noEnv = await syncWorkflows(c, "nope").catch((e) => e) as StationError;
    assertEquals([noEnv.code, noEnv.status], ["environment_not_found", 404]);
  } finally {
    await t.close();
    await home.cleanup();
  }
});
