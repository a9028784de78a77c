import { join } from "node:path";
import { syncMcpServers } from "../../src/mcp/mod.ts";
import { StationError } from "../../src/errors.ts";
import { readCassette, writeCassette } from "../../src/testing/cassette.ts";
import { CaseTools, ToolMocksSchema } from "../../src/testing/mocks.ts";
import { CassetteRecorder, recordingSecrets } from "../../src/testing/record.ts";
import { rerecording } from "../../src/testing/recordings.ts";
import { CassetteReplay } from "../../src/testing/replay.ts";
import { ScriptModels } from "../../src/testing/script.ts";
import { agentDef, type AgentHarness, agentHarness } from "../helpers/agents.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { syncWorkflows } from "../../src/client/workflows.ts";
import { startTestStation } from "../helpers/station.ts";
import { def, waitRun } from "../workflows/engine_helpers.ts";
import { type ModelServer, startModelServer } from "../helpers/model_server.ts";

/**
 * Test doubles through the real agent service: a SQLite ledger, the real stdio MCP test server synced into
 * the catalogue, the scripted model server for recording. Replays run with the model server stopped.
 */

const AI = { provider: "openai" as const, model: "openai/test-model" };

const weatherPrompt = (word: string) =>
  `---
model: openai/test-model
tools: ["__echo", "__env"]
max_steps: 4
---
{{role "system"}}
You are a ${word} weather assistant.
Use the echo tool before answering.
{{role "user"}}
{{userInput}}
`;

interface Setup {
  model: ModelServer;
  h: AgentHarness;
  /** The environments folder; `default` (the environment's folder) holds the MCP config and variables. */
  root: string;
  dir: string;
  close(): Promise<void>;
}

async function setup(): Promise<Setup> {
  const model = startModelServer();
  const h = await agentHarness(model.url, [
    agentDef("Weather", weatherPrompt("careful"), { tools: ["__echo", "__env"] }),
    agentDef("Boss", `---\nmodel: openai/test-model\nagents: ["Weather"]\n---\n{{userInput}}\n`, {
      agents: ["Weather"],
    }),
    agentDef("Coder", `---\nmodel: openai/test-model\nsandbox: python\n---\n{{userInput}}\n`, {
      sandbox: { mode: "compute", runtime: "python", session: "agent", allow_network: false },
    }),
  ]);
  const root = await Deno.makeTempDir({ prefix: "stn-doubles-" });
  const dir = join(root, "default");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(
    join(dir, "servers.json"),
    JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
  );
  await Deno.writeTextFile(join(dir, "variables.yml"), "WEATHER_API_TOKEN: tok-very-secret-42\n");
  const report = await syncMcpServers(h.db, { environment: "default", directory: dir }, {
    trust: true,
    timeoutMs: 15_000,
  });
  assertEquals(report.servers.map((s) => s.status), ["ok"]);
  return {
    model,
    h,
    root,
    dir,
    close: async () => {
      await h.close();
      await model.close().catch(() => {});
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Records one Weather run (an echo call, then an answer) against the scripted server into `file`. */
async function record(s: Setup, file: string, task = "weather in Oslo?") {
  s.model.script(
    { calls: [{ name: "__echo", args: { text: "Oslo" } }] },
    { text: "Sunny in Oslo" },
  );
  const secrets = await recordingSecrets("sk-test", {}, s.dir);
  const recorder = new CassetteRecorder({ agent: "Weather", environment: "default" }, secrets);
  const run = await s.h.service.run({
    agent: "Weather",
    environment: "default",
    task,
    doubles: { record: recorder },
  });
  assertEquals([run.status, run.response], ["completed", "Sunny in Oslo"]);
  await writeCassette(file, recorder.cassette());
  return run;
}

/** Replays `file` (model server already stopped) and returns the ended run. */
async function replay(s: Setup, file: string, match: "strict" | "loose" = "strict") {
  const cassette = await readCassette(file);
  const player = new CassetteReplay(cassette, { where: file, match, ai: AI });
  return await s.h.service.run({
    agent: "Weather",
    environment: "default",
    task: "weather in Oslo?",
    doubles: { models: player.models, tools: new CaseTools({ replay: player }) },
  });
}

Deno.test("cassette: record an agent run with a tool call, replay it offline; a changed prompt word fails with a diff; loose passes", async () => {
  const s = await setup();
  try {
    const file = join(s.dir, "weather.cassette.yaml");
    const recorded = await record(s, file);
    const text = await Deno.readTextFile(file);
    assertStringIncludes(text, "stn_cassette: 1");
    assertStringIncludes(text, "You are a careful weather assistant.");
    const cassette = await readCassette(file);
    assertEquals(cassette.runs.length, 1);
    assertEquals(cassette.runs[0].key, "agent:Weather");
    assertEquals(
      cassette.runs[0].events.map((e) => "model" in e ? "model" : `tool ${e.tool.name}`),
      ["model", "tool __echo", "model"],
    );
    const echo = cassette.runs[0].events[1];
    assert("tool" in echo);
    assertEquals([echo.tool.args, echo.tool.output], [{ text: "Oslo" }, JSON.stringify({ text: "Oslo" })]);
    const first = cassette.runs[0].events[0];
    assert("model" in first);
    assertEquals(first.model.request.tools.map((t) => t.name).sort(), ["__echo", "__env"]);

    // No network from here on: the model server is gone.
    await s.model.close();
    const again = await replay(s, file);
    assertEquals([again.status, again.response, again.turns], ["completed", recorded.response, 2]);
    assertEquals(
      s.h.service.ledger.toolCalls(again.id).map((c) => [c.name, c.output]),
      s.h.service.ledger.toolCalls(recorded.id).map((c) => [c.name, c.output]),
    );

    // One word of the prompt changes: the replay fails naming the line, recorded and now.
    s.h.defs.set("Weather", agentDef("Weather", weatherPrompt("cheerful"), { tools: ["__echo", "__env"] }));
    const drifted = await replay(s, file);
    assertEquals([drifted.status, drifted.finish_reason], ["failed", "error"]);
    const error = JSON.parse(drifted.error!) as { code: string; message: string };
    assertEquals(error.code, "cassette_mismatch");
    assertStringIncludes(error.message, "model call 1 differs from the recording");
    const minus = error.message.split("\n").find((l) => l.startsWith("-"));
    const plus = error.message.split("\n").find((l) => l.startsWith("+"));
    assert(minus && /^- +\d+ \| .*You are a careful weather assistant\.$/.test(minus), error.message);
    assert(plus && /^\+ +\d+ \| .*You are a cheerful weather assistant\.$/.test(plus), error.message);
    assertEquals(error.message.split("\n").filter((l) => /^[-+] /.test(l)).length, 2, error.message);

    // match: loose answers by order: the drifted prompt passes.
    const loose = await replay(s, file, "loose");
    assertEquals([loose.status, loose.response], ["completed", "Sunny in Oslo"]);
  } finally {
    await s.close();
  }
});

Deno.test("cassette: re-recording (stn test --update) after a prompt change makes the case pass again", async () => {
  const s = await setup();
  try {
    const file = join(s.dir, "weather.cassette.yaml");
    await record(s, file);
    s.h.defs.set("Weather", agentDef("Weather", weatherPrompt("cheerful"), { tools: ["__echo", "__env"] }));
    assertEquals(JSON.parse((await replay(s, file)).error!).code, "cassette_mismatch");

    // The configured model (the scripted server) and the live MCP server, recorded over the old file.
    s.model.script({ calls: [{ name: "__echo", args: { text: "Oslo" } }] }, { text: "Sunny again" });
    const update = await rerecording({ agent: "Weather", environment: "default" }, {
      apiKey: "sk-test",
      env: {},
      environmentsDir: s.root,
    });
    const live = await s.h.service.run({
      agent: "Weather",
      environment: "default",
      task: "weather in Oslo?",
      doubles: update.doubles,
    });
    assertEquals([live.status, live.response], ["completed", "Sunny again"]);
    await update.save(file);
    assertStringIncludes(await Deno.readTextFile(file), "You are a cheerful weather assistant.");

    const served = s.model.requests.length;
    const again = await replay(s, file);
    assertEquals([again.status, again.response], ["completed", "Sunny again"]);
    assertEquals(s.model.requests.length, served, "the replay made no model request");
  } finally {
    await s.close();
  }
});

Deno.test("cassette: secrets (the API key, secret variables) never reach the file", async () => {
  const s = await setup();
  try {
    const file = join(s.dir, "secret.cassette.yaml");
    await record(s, file, "use token tok-very-secret-42 with key sk-test");
    const text = await Deno.readTextFile(file);
    assert(!text.includes("tok-very-secret-42"), text);
    assert(!text.includes("sk-test"), text);
    assertStringIncludes(text, "use token ******** with key ********");

    // Replayed with the same secrets masked, the request matches the masked recording.
    await s.model.close();
    const player = new CassetteReplay(await readCassette(file), {
      where: file,
      ai: AI,
      secrets: await recordingSecrets("sk-test", {}, s.dir),
    });
    const again = await s.h.service.run({
      agent: "Weather",
      environment: "default",
      task: "use token tok-very-secret-42 with key sk-test",
      doubles: { models: player.models, tools: new CaseTools({ replay: player }) },
    });
    assertEquals([again.status, again.response], ["completed", "Sunny in Oslo"]);
  } finally {
    await s.close();
  }
});

Deno.test("cassette: a malformed file is cassette_invalid with the field", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "bad.yaml");
    await Deno.writeTextFile(file, "stn_cassette: 1\nruns:\n  - key: x\n    agent: a\n");
    const err = await assertRejects(() => readCassette(file), StationError) as StationError;
    assertEquals(err.code, "cassette_invalid");
    assertStringIncludes(err.message, "runs.0.model");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs Weather under a model script and tool doubles. */
async function scripted(h: AgentHarness, script: unknown[], tools: CaseTools) {
  const models = new ScriptModels(script as never, AI);
  const run = await h.service.run({
    agent: "Weather",
    environment: "default",
    task: "weather?",
    doubles: { models: models.models, tools },
  });
  return { run, calls: h.service.ledger.toolCalls(run.id), models };
}

Deno.test("mocks: an unmocked tool call fails naming the tool; expr sees the args; sequence answers in order, the last repeats", async () => {
  const s = await setup();
  try {
    await s.model.close();
    const calls = [{ tool_calls: [{ name: "echo", args: { text: "Bergen" } }] }, { text: "done" }];

    const unmocked = await scripted(s.h, calls, new CaseTools({}));
    assertEquals(unmocked.run.status, "failed");
    const e = JSON.parse(unmocked.run.error!) as { code: string; message: string };
    assertEquals(e.code, "tool_not_mocked");
    assertStringIncludes(e.message, "called tool __echo, which is neither mocked nor recorded");

    const mocks = ToolMocksSchema.parse({ echo: { expr: `{"forecast": "rain in " & $args.text}` } });
    const exprRun = await scripted(s.h, calls, new CaseTools({ mocks }));
    assertEquals([exprRun.run.status, exprRun.run.response], ["completed", "done"]);
    assertEquals(exprRun.calls.map((c) => c.output), [JSON.stringify({ forecast: "rain in Bergen" })]);

    const sequence = ToolMocksSchema.parse({
      __echo: { sequence: [{ result: "first" }, { result: { n: 2 } }, { error: "quota exceeded" }] },
    });
    const three = { tool_calls: [1, 2, 3, 4].map((n) => ({ name: "__echo", args: { text: `${n}` } })) };
    const seqRun = await scripted(s.h, [three, { text: "ok" }], new CaseTools({ mocks: sequence }));
    assertEquals(seqRun.run.status, "completed");
    assertEquals(seqRun.calls.map((c) => [c.output, c.error]), [
      ["first", null],
      [JSON.stringify({ n: 2 }), null],
      [JSON.stringify({ error: "quota exceeded" }), "quota exceeded"],
      [JSON.stringify({ error: "quota exceeded" }), "quota exceeded"],
    ]);

    // A mocked sandbox tool needs no sandbox service (this harness has none: no Docker needed).
    const coder = new ScriptModels([
      { tool_calls: [{ name: "sandbox_run", args: { code: "print(6*7)" } }] },
      { text: "42" },
    ], AI);
    const sandboxed = await s.h.service.run({
      agent: "Coder",
      environment: "default",
      task: "compute",
      doubles: {
        models: coder.models,
        tools: new CaseTools({ mocks: { sandbox_run: { expr: `{"stdout": "ran " & $args.code}` } } }),
      },
    });
    assertEquals([sandboxed.status, sandboxed.response], ["completed", "42"]);
    assertEquals(s.h.service.ledger.toolCalls(sandboxed.id).map((c) => c.output), [
      JSON.stringify({ stdout: "ran print(6*7)" }),
    ]);

    // tools: live sends an unmocked call to the real MCP server (started only now).
    const live = await scripted(s.h, calls, new CaseTools({ live: true }));
    assertEquals(live.calls.map((c) => c.output), [JSON.stringify({ text: "Bergen" })]);
  } finally {
    await s.close();
  }
});

Deno.test("script: answers in order, structured output as JSON; exhausted fails the run; doubles reach child agents and workflow steps", async () => {
  const s = await setup();
  try {
    const structured = await scripted(s.h, [{ output: { temp: 21 } }], new CaseTools({}));
    assertEquals(structured.run.response, JSON.stringify({ temp: 21 }));

    const exhausted = await scripted(
      s.h,
      [{ tool_calls: [{ name: "__echo", args: {} }] }],
      new CaseTools({
        mocks: { __echo: { result: "x" } },
      }),
    );
    assertEquals(JSON.parse(exhausted.run.error!).code, "model_script_exhausted");

    // Registered for the parent: the child agent's calls are doubled too (its answer is meant for it).
    const models = new ScriptModels([
      { agent: "Boss", tool_calls: [{ name: "__agent_weather", args: { task: "Oslo?" } }] },
      { agent: "Weather", text: "Sunny" },
      { agent: "Boss", text: "The weather: Sunny" },
    ], AI);
    const boss = await s.h.service.run({
      agent: "Boss",
      environment: "default",
      task: "ask",
      doubles: { models: models.models, tools: new CaseTools({}) },
    });
    assertEquals([boss.status, boss.response, models.unused()], ["completed", "The weather: Sunny", 0]);

    // Registered under a workflow run id: an agent step of that run (and only it) gets them.
    const step = new ScriptModels([{ text: "from the step's double" }], AI);
    const unregister = s.h.service.doubles.register("wf-run-1", { models: step.models });
    const inStep = await s.h.service.run({
      agent: "Weather",
      environment: "default",
      task: "x",
      step: { runId: "wf-run-1", path: "/states/0", visit: 1, attempt: 1 },
    });
    assertEquals(inStep.response, "from the step's double");
    unregister();
    s.model.script({ text: "from the configured model" });
    const other = await s.h.service.run({
      agent: "Weather",
      environment: "default",
      task: "x",
      step: { runId: "wf-run-2", path: "/states/0", visit: 1, attempt: 1 },
    });
    assertEquals(other.response, "from the configured model");
    assertEquals(s.model.requests.length, 1, "only the run without doubles reached the model server");
  } finally {
    await s.close();
  }
});

Deno.test("doubles registered for a workflow run (claimFor) answer every agent step in it, through the real engine", async () => {
  const t = await startTestStation({
    // No model server at all: a model call that escaped the doubles would fail the run.
    configYaml:
      `ai:\n  provider: openai\n  base_url: http://127.0.0.1:9/v1\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  });
  try {
    const dir = t.home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(`${dir}/Rater.prompt`, `---\nmodel: openai/test-model\n---\n{{userInput}}\n`);
    await syncWorkflows(t.client);
    const { engine, agents } = t.station.ctx;
    const script = new ScriptModels([{ output: { level: "high" } }, { text: "paged" }], AI);
    const run = await engine.startRun({
      definition: def({
        id: "rate",
        states: [
          { id: "rate", type: "agent", agent: "Rater", task: "rate it", next: "page" },
          { id: "page", type: "agent", agent: "Rater", task: "page for ${rate.result.level}" },
        ],
      }),
      input: {},
      claim: agents.doubles.claimFor({ models: script.models, tools: new CaseTools({}) }),
    });
    const done = await waitRun(engine, run.id);
    assertEquals(done.status, "completed", done.error ?? "");
    assertEquals(agents.ledger.byWorkflowRun(run.id).map((r) => [r.step_path, r.response]), [
      ["rate", JSON.stringify({ level: "high" })],
      ["page", "paged"],
    ]);
    assertEquals(script.unused(), 0);
  } finally {
    await t.close();
  }
});
