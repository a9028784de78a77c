import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { childEnv, MAIN } from "../helpers/stn.ts";
import { connectHttp, startMcpStation, toolJson, until } from "./helpers.ts";
import { call } from "./scenario.ts";

/** An agent whose prompt needs the variable `who`. */
const GREETER = `---
model: openai/test-model
description: Greets someone
max_steps: 2
input:
  schema:
    who: string, whom to greet
---
{{role "system"}}
You greet {{who}}.
{{role "user"}}
{{userInput}}
`;

const PLAIN = `---
model: openai/test-model
---
{{role "system"}}
You are plain.
{{role "user"}}
{{userInput}}
`;

/** The last user message of a model request. */
const taskOf = (r: ModelRequest) =>
  String(r.body.messages.filter((m: { role: string }) => m.role === "user").at(-1)?.content ?? "");
const systemOf = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");

/** A failed tool call's error body. */
// deno-lint-ignore no-explicit-any -- an error body, which tests read field by field
async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  assert(result.isError, `${name} should fail: ${result.content?.[0]?.text}`);
  return toolJson(result).error;
}

Deno.test("mcp: agents run through both servers against the scripted model; sync adds tools; failures are tool errors", async () => {
  const model = startModelServer();
  // "fail" is answered with a provider error (400: not retried); anything else is echoed with the system prompt.
  model.route((r) =>
    taskOf(r).includes("fail")
      ? { status: 400, text: "the model refuses" }
      : { text: `${systemOf(r)} / ${taskOf(r)}`, usage: { input: 7, output: 3 } }
  );
  const home = await tempHome();
  home.writeConfig(`ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  const agentsDir = home.path("environments", "default", "agents");
  Deno.mkdirSync(agentsDir, { recursive: true });
  Deno.writeTextFileSync(join(agentsDir, "Greeter.prompt"), GREETER);
  const s = await startMcpStation({ home });
  const management = await connectHttp(s.mcpUrl);
  const agents = await connectHttp(s.agentUrl);
  try {
    // The agent server: agent_Greeter, with the agent's own input schema under variables.
    const listed = (await agents.listTools()).tools;
    assertEquals(listed.map((t: { name: string }) => t.name), ["agent_Greeter", "get_run_status"]);
    const schema = listed[0].inputSchema;
    assertEquals(schema.required, ["task", "variables"]);
    assertEquals(schema.properties.variables.required, ["who"]);
    assertStringIncludes(listed[0].description, "Greets someone");

    const waited = toolJson(
      await agents.callTool({
        name: "agent_Greeter",
        arguments: { task: "say hi", variables: { who: "Ada" }, wait: true },
      }),
    );
    assertEquals([waited.status, waited.response], ["completed", "You greet Ada. / say hi"]);
    assertEquals(waited.usage.input_tokens, 7);
    const started = toolJson(
      await agents.callTool({
        name: "agent_Greeter",
        arguments: { task: "later", variables: { who: "Bo" } },
      }),
    );
    assertMatch(started.run_id, /^arun_/);
    const status = await until(
      () => call(agents, "get_run_status", { run_id: started.run_id }),
      (r) => r.status === "completed",
      "the async agent run",
    );
    assertEquals(status.response, "You greet Bo. / later");
    const badInput = await toolError(agents, "agent_Greeter", { task: "hi", variables: {} });
    assertEquals(badInput.code, "agent_input_invalid");
    const failedHere = await toolError(agents, "agent_Greeter", {
      task: "please fail",
      variables: { who: "X" },
      wait: true,
    });
    assertEquals(failedHere.code, "agent_run_failed");
    assertStringIncludes(failedHere.hint, "get_run_status");

    // The management server: list, get, run (sync and async), runs, the agents resource.
    const { agents: all } = await call(management, "list_agents", {});
    assertEquals(all.map((a: { name: string }) => a.name), ["Greeter"]);
    const shown = await call(management, "get_agent", { name: "Greeter" });
    assertEquals(shown.agent.input_schema.required, ["who"]);
    const ran = await call(management, "run_agent", {
      name: "Greeter",
      task: "through management",
      variables: { who: "Cy" },
      wait: true,
    });
    assertEquals([ran.status, ran.response], ["completed", "You greet Cy. / through management"]);
    const asynchronous = await call(management, "run_agent", {
      name: "Greeter",
      task: "async",
      variables: { who: "Di" },
    });
    assertEquals(asynchronous.status, "running");
    const done = await until(
      () => call(management, "get_agent_run", { runId: asynchronous.run_id }),
      (r) => r.status === "completed",
      "the management async run",
    );
    assertEquals(done.history.length, 1);
    const { runs } = await call(management, "list_agent_runs", { agent: "Greeter", status: "completed" });
    assertEquals(runs.length, 4);
    assertEquals(runs[0].run_id, asynchronous.run_id, "newest first");
    const resource = await management.readResource({ uri: "station://agents" });
    assertEquals(JSON.parse(resource.contents[0].text).agents.map((a: { name: string }) => a.name), [
      "Greeter",
    ]);

    // A wait that runs out answers the run as it is; cancel_agent_run ends a running one.
    let release!: () => void;
    model.script({ text: "late", hold: new Promise<void>((r) => release = r) });
    const cut = await call(agents, "agent_Greeter", {
      task: "slow",
      variables: { who: "Gus" },
      wait: true,
      timeout_seconds: 1,
    });
    assertEquals([cut.status, cut.response], ["running", null]);
    release();
    const late = await until(
      () => call(agents, "get_run_status", { run_id: cut.run_id }),
      (r) => r.status === "completed",
      "the run the wait left",
    );
    assertEquals(late.response, "late");
    model.script({ text: "never", hold: new Promise<void>(() => {}) });
    const before = model.requests.length;
    const held = await call(management, "run_agent", {
      name: "Greeter",
      task: "held",
      variables: { who: "H" },
    });
    await model.waitForRequests(before + 1);
    await call(management, "cancel_agent_run", { runId: held.run_id, reason: "enough" });
    const canceled = await until(
      () => call(management, "get_agent_run", { runId: held.run_id }),
      (r) => r.status !== "running",
      "the canceled run",
    );
    assertEquals([canceled.status, canceled.error.code], ["canceled", "canceled"]);

    // `queue`: the run waits for a `stn worker` serving it (none does here), then is canceled while queued.
    const queued = await call(management, "run_agent", {
      name: "Greeter",
      task: "on a worker",
      variables: { who: "Q" },
      queue: "gpu",
      wait: true,
      timeout_seconds: 1,
    });
    assertEquals([queued.status, queued.queue, queued.owner], ["queued", "gpu", null]);
    assertEquals(queued.waiting_for.queue, "gpu");
    assertStringIncludes(queued.waiting_for.reason, "none is serving it");
    const unqueued = await call(management, "cancel_agent_run", { runId: queued.run_id });
    assertEquals(unqueued.status, "canceled");

    // Errors are tool errors with the API's code and hint; the session lives on.
    const unknown = await toolError(management, "run_agent", { name: "Greeterr", task: "x" });
    assertEquals(unknown.code, "agent_not_found");
    assertStringIncludes(unknown.message, "(no file agents/Greeterr.prompt)");
    assertStringIncludes(unknown.hint, "did you mean `Greeter`?");
    const failed = await toolError(management, "run_agent", {
      name: "Greeter",
      task: "fail now",
      variables: { who: "Ed" },
      wait: true,
    });
    assertEquals([failed.code, failed.details.run.status], ["agent_run_failed", "failed"]);
    assertEquals(failed.details.run.error.code, "model_error");
    assertStringIncludes(failed.message, "model_error");
    assertStringIncludes(failed.hint, `get_agent_run with run_id ${failed.details.run.run_id}`);
    const missingRun = await toolError(management, "get_agent_run", { runId: "arun_nope" });
    assertEquals(missingRun.code, "agent_run_not_found");

    // A sync that adds an agent: sessions hear tools/list_changed, and the new tool is there.
    let changes = 0;
    agents.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    Deno.writeTextFileSync(join(agentsDir, "Plain.prompt"), PLAIN);
    const report = await call(management, "sync_environment", {});
    assertEquals(report.agents.created.map((a: { name: string }) => a.name), ["Plain"]);
    await until(() => Promise.resolve(changes), (n) => n === 1, "tools/list_changed after the sync");
    const names = (await agents.listTools()).tools.map((t: { name: string }) => t.name);
    assertEquals(names, ["agent_Greeter", "agent_Plain", "get_run_status"]);
    const plain = (await agents.listTools()).tools[1].inputSchema;
    assertEquals(plain.required, ["task"]);
    await call(management, "sync_environment", {});
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(changes, 1, "a sync that changed nothing sends no list_changed");
    Deno.removeSync(join(agentsDir, "Plain.prompt"));
    await call(management, "sync_environment", {});
    await until(() => Promise.resolve(changes), (n) => n === 2, "tools/list_changed after the removal");

    // stn mcp stdio, against this running station: the same run_agent.
    const stdio = new Client({ name: "stn-test", version: "1.0.0" });
    await stdio.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [...STN_RUN_ARGS, MAIN, "mcp", "stdio"],
        env: childEnv({ ...home.env, STATION_URL: s.station.url }),
        stderr: "inherit",
      }),
    );
    try {
      const overStdio = await call(stdio, "run_agent", {
        name: "Greeter",
        task: "over stdio",
        variables: { who: "Flo" },
        wait: true,
      });
      assertEquals(overStdio.response, "You greet Flo. / over stdio");
    } finally {
      await stdio.close();
    }
  } finally {
    await management.close();
    await agents.close();
    await s.close();
    await model.close();
    await home.cleanup();
  }
});
