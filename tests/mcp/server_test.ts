import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { RunListQuery } from "../../src/contract/runs.ts";
import { inputJsonSchema } from "../../src/mcp/server/tool.ts";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { connectHttp, startMcpStation, toolJson, until } from "./helpers.ts";
import { call, exerciseManagement } from "./scenario.ts";

/** The page the resource station://docs/workflow-dsl serves, as it is in the checkout. */
const WORKFLOW_DSL = Deno.readTextFileSync(new URL("../../docs/workflows.md", import.meta.url));

Deno.test("mcp: the management server over Streamable HTTP runs workflows, approvals and files through tools", async (t) => {
  const s = await startMcpStation();
  const client = await connectHttp(s.mcpUrl);
  try {
    await t.step(
      "workflow to completion through an approval; files up and down",
      () => exerciseManagement(client, "http"),
    );

    await t.step(
      "input schemas are the API's contract schemas; annotations say what a tool changes",
      async () => {
        const tools = (await client.listTools()).tools;
        const runs = tools.find((x: { name: string }) => x.name === "list_workflow_runs");
        assertEquals(runs.inputSchema, inputJsonSchema(RunListQuery));
        const hints = (name: string) => tools.find((x: { name: string }) => x.name === name).annotations;
        assertEquals(hints("list_workflow_runs").readOnlyHint, true);
        assertEquals(hints("delete_file").destructiveHint, true);
        assertEquals(hints("start_workflow_run").destructiveHint, false);
      },
    );

    await t.step("API errors are tool errors with the code and hint; the session lives on", async () => {
      const missing = await client.callTool({ name: "get_workflow_run", arguments: { runId: "r-none" } });
      assertEquals(missing.isError, true);
      const body = toolJson(missing);
      assertEquals(body.error.code, "run_not_found");
      assert(body.error.hint, "the error carries the API's hint");
      const bad = await client.callTool({ name: "list_workflow_runs", arguments: { limit: 0 } });
      assertEquals([bad.isError, toolJson(bad).error.code], [true, "invalid_request"]);
      const both = await client.callTool({
        name: "upload_file",
        arguments: { content: "a", content_b64: "YQ==" },
      });
      assertEquals(toolJson(both).error.code, "invalid_request");
      const unknown = await client.callTool({ name: "no_such_tool", arguments: {} }).then(
        () => null,
        (e: Error) => e,
      );
      assertMatch(String(unknown?.message), /unknown tool no_such_tool/);
      assertEquals(await client.ping(), {});
    });

    await t.step("resources: the workflows, the DSL reference, a run by id", async () => {
      const uris = (await client.listResources()).resources.map((r: { uri: string }) => r.uri);
      assertEquals(uris, [
        "station://workflows",
        "station://agents",
        "station://environments",
        "station://docs/workflow-dsl",
      ]);
      const dsl = await client.readResource({ uri: "station://docs/workflow-dsl" });
      assertEquals([dsl.contents[0].mimeType, dsl.contents[0].text], ["text/markdown", WORKFLOW_DSL]);
      assertMatch(WORKFLOW_DSL, /human_approval/);
      const workflows = JSON.parse(
        (await client.readResource({ uri: "station://workflows" })).contents[0].text,
      );
      assertEquals(workflows.workflows.map((w: { id: string }) => w.id), ["mcp-greet"]);
      const templates = (await client.listResourceTemplates()).resourceTemplates;
      assertEquals(templates.map((x: { uriTemplate: string }) => x.uriTemplate), ["station://runs/{id}"]);
      const { runs } = await call(client, "list_workflow_runs", {});
      const run = JSON.parse(
        (await client.readResource({ uri: `station://runs/${runs[0].id}` })).contents[0].text,
      );
      assertEquals([run.id, run.status], [runs[0].id, "completed"]);
      const gone = await client.readResource({ uri: "station://runs/r-none" }).then(
        () => null,
        (e: Error) => e,
      );
      assertMatch(String(gone?.message), /no workflow run r-none/);
    });

    await t.step("repair tools: an expression against a run's data, a retry refused, a fork", async () => {
      const { runs } = await call(client, "list_workflow_runs", {});
      const parent = runs.find((r: { status: string }) => r.status === "completed");
      const value = await call(client, "eval_workflow_expression", {
        run_id: parent.id,
        expression: "workflow.run_id",
      });
      assertEquals(value.value, parent.id);
      const bad = await client.callTool({
        name: "eval_workflow_expression",
        arguments: { run_id: parent.id, expression: "1 +" },
      });
      assertEquals([bad.isError, toolJson(bad).error.code], [true, "expression_invalid"]);
      const refused = await client.callTool({ name: "retry_workflow_run", arguments: { run_id: parent.id } });
      assertEquals(toolJson(refused).error.code, "run_not_retryable");
      const { steps } = await call(client, "get_workflow_run_steps", { run_id: parent.id });
      const fork = await call(client, "fork_workflow_run", { run_id: parent.id, from: steps.at(-1).path });
      assertEquals([fork.parent_run_id, fork.forked_from], [parent.id, steps.at(-1).path]);
    });
  } finally {
    await client.close();
    await s.close();
  }
});

const QUICK = `id: quick
description: doubles n
inputSchema:
  type: object
  properties: { n: { type: integer } }
  required: [n]
states:
  - id: calc
    type: transform
    expression: "{'twice': n * 2}"
`;

Deno.test("mcp: the agent server offers one tool per workflow and tells sessions when stn sync changes them", async () => {
  const s = await startMcpStation();
  const management = await connectHttp(s.mcpUrl);
  const agents = await connectHttp(s.agentUrl);
  try {
    const names = async () => (await agents.listTools()).tools.map((x: { name: string }) => x.name);
    assertEquals(await names(), ["get_run_status"]);
    let changes = 0;
    agents.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);

    // A workflow file synced from the environment: the tool list changes and sessions are told.
    const dir = s.home.path("environments", "default", "workflows");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(join(dir, "quick.workflow.yaml"), QUICK);
    const report = await call(management, "sync_environment", {});
    assertEquals(report.created.map((w: { id: string }) => w.id), ["quick"]);
    await until(() => Promise.resolve(changes), (n) => n === 1, "tools/list_changed after the sync");
    assertEquals(await names(), ["workflow_quick", "get_run_status"]);
    const tool = (await agents.listTools()).tools[0];
    assertEquals(tool.inputSchema.required, ["n"]);
    assert(tool.inputSchema.properties.wait, "the wait control is offered");

    const started = toolJson(await agents.callTool({ name: "workflow_quick", arguments: { n: 4 } }));
    assertMatch(started.run_id, /^[0-9A-Z]{26}$/);
    const status = await until(
      async () =>
        toolJson(await agents.callTool({ name: "get_run_status", arguments: { run_id: started.run_id } })),
      (r) => r.status === "completed",
      "the run",
    );
    assertEquals(status.result, { twice: 8 });
    const waited = toolJson(
      await agents.callTool({ name: "workflow_quick", arguments: { n: 5, wait: true } }),
    );
    assertEquals([waited.status, waited.result, waited.input], ["completed", { twice: 10 }, { n: 5 }]);
    const invalid = await agents.callTool({ name: "workflow_quick", arguments: { n: "five" } });
    assertEquals([invalid.isError, toolJson(invalid).error.code], [true, "input_invalid"]);

    // Unchanged files change nothing; a removed file disables the workflow and its tool goes.
    await call(management, "sync_environment", {});
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(changes, 1, "a sync that changed nothing sends no list_changed");
    Deno.removeSync(join(dir, "quick.workflow.yaml"));
    await call(management, "sync_environment", {});
    await until(() => Promise.resolve(changes), (n) => n === 2, "tools/list_changed after the removal");
    assertEquals(await names(), ["get_run_status"]);

    // A wait that runs out answers the run as it is (the in-process event stream stops following).
    await call(management, "apply_workflow", {
      yaml: "id: nap\nstates:\n  - id: nap\n    type: timer\n    duration: 1h\n",
    });
    const napping = await until(
      () => agents.callTool({ name: "workflow_nap", arguments: { wait: true, timeout_seconds: 1 } }),
      (r: { isError?: boolean; content: { type: string; text: string }[] }) => !r.isError,
      "the nap tool",
    );
    const napRun = toolJson(napping);
    assertEquals([napRun.workflow_id, napRun.status], ["nap", "waiting"]);
    await call(management, "cancel_workflow_run", { runId: napRun.id });
  } finally {
    await management.close();
    await agents.close();
    await s.close();
  }
});
