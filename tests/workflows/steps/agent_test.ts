import { syncWorkflows } from "../../../src/client/workflows.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { type ModelRequest, startModelServer } from "../../helpers/model_server.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../../sandbox/backend.ts";
import { def, waitRun } from "../helpers.ts";

const TRIAGE = `---
model: openai/test-model
output:
  format: json
  schema:
    type: object
    properties: {severity: {type: string}}
    required: [severity]
---
{{role "system"}}
You triage alerts for {{team}}.
{{role "user"}}
{{userInput}}
`;

Deno.test("workflow agent step: templated task and variables, linked run, result as output, cancel reaches the agent", async () => {
  const model = startModelServer();
  const t = await startTestStation({
    configYaml:
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  });
  try {
    const dir = t.home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(`${dir}/Triage.prompt`, TRIAGE);
    await syncWorkflows(t.client); // agents run as `stn sync` stored them
    const { engine, agents } = t.station.ctx;
    model.script({ text: '{"severity":"high"}', usage: { input: 20, output: 6 } });
    const run = await engine.startRun({
      definition: def({
        id: "triage",
        states: [{
          id: "ask",
          type: "agent",
          agent: "Triage",
          task: "Rate: ${alert}",
          input: { variables: { team: "${team}" } },
          output: { level: "$.result.severity", tokens: "$.usage.total_tokens" },
          next: "done",
        }, { id: "done", type: "transform", expression: "{'level': level, 'tokens': tokens}" }],
      }),
      input: { alert: "disk full", team: "ops" },
    });
    const done = await waitRun(engine, run.id);
    assertEquals([done.status, JSON.parse(done.result!)], ["completed", { level: "high", tokens: 26 }]);
    const sent = model.requests[0].body.messages;
    assertEquals(sent[0].content, "You triage alerts for ops.");
    assertStringIncludes(sent[1].content, "Rate: disk full");
    const [agentRun] = agents.ledger.byWorkflowRun(run.id);
    assertEquals([agentRun.agent, agentRun.step_path, agentRun.step_attempt, agentRun.total_tokens], [
      "Triage",
      "ask",
      1,
      26,
    ]);

    // Canceling the workflow run cancels the agent's model call.
    model.script({ hold: new Promise(() => {}) });
    const slow = await engine.startRun({
      definition: def({
        id: "slow",
        states: [{
          id: "ask",
          type: "agent",
          agent: "Triage",
          task: "x",
          input: { variables: { team: "a" } },
        }],
      }),
      input: {},
    });
    await model.waitForRequests(2);
    engine.cancel(slow.id, "stop");
    assertEquals((await waitRun(engine, slow.id)).status, "canceled");
    const [canceled] = agents.ledger.byWorkflowRun(slow.id);
    const ended = await agents.wait(canceled.id);
    assertEquals([ended.status, ended.finish_reason], ["canceled", "canceled"]);
  } finally {
    await t.close();
    await model.close();
  }
});

const sandboxAgent = (role: string) =>
  `---
model: openai/test-model
sandbox:
  mode: code
  runtime: sh
  session: workflow
---
{{role "system"}}
You are the ${role}.
{{role "user"}}
{{userInput}}
`;

Deno.test("workflow agent steps share the run's workflow-scoped sandbox session, closed when the run ends", async () => {
  const model = startModelServer();
  const t = await startTestStation({
    configYaml: `${SANDBOX_CONFIG}\nai:\n  base_url: ${model.url}\n  api_key: sk-test\n`,
  });
  const { engine, sandbox } = t.station.ctx;
  try {
    const dir = t.home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(`${dir}/Writer.prompt`, sandboxAgent("writer"));
    Deno.writeTextFileSync(`${dir}/Reader.prompt`, sandboxAgent("reader"));
    await syncWorkflows(t.client);
    const lastTool = (r: ModelRequest) =>
      r.body.messages.filter((m: { role: string }) => m.role === "tool").at(-1);
    model.route((r) => {
      const writer = String(r.body.messages[0].content).includes("writer");
      const tool = lastTool(r);
      assertEquals(
        r.body.tools.some((x: { function: { name: string } }) => x.function.name === "sandbox_open"),
        false,
      );
      if (!tool) {
        return writer
          ? { calls: [{ name: "sandbox_fs_write", args: { path: "note.txt", contents: "from step one" } }] }
          : { calls: [{ name: "sandbox_exec", args: { cmd: ["cat", "note.txt"] } }] };
      }
      return { text: writer ? "written" : JSON.parse(tool.content).stdout };
    });
    const run = await engine.startRun({
      definition: def({
        id: "pair",
        states: [
          { id: "write", type: "agent", agent: "Writer", task: "write the note", next: "read" },
          { id: "read", type: "agent", agent: "Reader", task: "read the note", next: "answer" },
          { id: "answer", type: "transform", expression: "read.response" },
        ],
      }),
      input: {},
    });
    const done = await waitRun(engine, run.id, undefined, 60_000);
    assertEquals([done.status, JSON.parse(done.result!)], ["completed", { result: "from step one" }]);
    const sessions = sandbox!.list(true).filter((s) => s.run_id === run.id);
    assertEquals(sessions.map((s) => s.scope), ["workflow"], "one session for the whole run");
    assert(await waitFor(() => sandbox!.list().length === 0, 15_000), "the run's session is closed with it");
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
    await model.close();
  }
});

Deno.test("workflow agent step without `task`: the run input's task, else its userInput, taken as text (Station's fallback)", async () => {
  const model = startModelServer();
  const t = await startTestStation({
    configYaml:
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  });
  try {
    const dir = t.home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(`${dir}/Echo.prompt`, `---\nmodel: openai/test-model\n---\n{{userInput}}\n`);
    await syncWorkflows(t.client);
    const { engine } = t.station.ctx;
    const definition = def({ id: "echo", states: [{ id: "say", type: "agent", agent: "Echo" }] });
    model.route(() => ({ text: "ok" }));
    for (
      const [input, sent] of [
        [{ task: "check ${disk}", userInput: "ignored" }, "check ${disk}"],
        [{ userInput: "hello" }, "hello"],
      ] as const
    ) {
      const before = model.requests.length;
      const run = await engine.startRun({ definition, input: { ...input, disk: "sda" } });
      assertEquals((await waitRun(engine, run.id)).status, "completed");
      assertEquals(model.requests[before].body.messages.at(-1).content, sent);
    }
  } finally {
    await t.close();
    await model.close();
  }
});
