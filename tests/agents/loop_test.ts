import type { AgentTool, Toolbox } from "../../src/agents/types.ts";
import { StationError } from "../../src/errors.ts";
import { agentDef, agentHarness, PLAIN_PROMPT } from "../helpers/agents.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { type Reply, startModelServer } from "../helpers/model_server.ts";

const TOOLS_PROMPT = `---
model: openai/test-model
tools: ["__big", "__boom", "__echo"]
max_steps: 4
---
{{role "system"}}
Use your tools.
{{role "user"}}
{{userInput}}
`;

/** MCP-like tools built directly (the MCP client is another module's): big output, an error, an echo, a slow one. */
function testTools(
  calls: string[],
  slow?: { started: () => void; hang?: () => boolean },
  onCall?: () => void,
): Toolbox {
  const tool = (name: string, call: AgentTool["call"]): AgentTool => ({
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object", properties: { x: { type: "string" } } },
    call: (args, signal) => {
      onCall?.();
      calls.push(name);
      return call(args, signal);
    },
  });
  return {
    tools: [
      tool("__big", () => Promise.resolve("é".repeat(50_000))),
      tool("__boom", () => Promise.reject(new Error("disk on fire"))),
      tool("__echo", (args) => Promise.resolve(JSON.stringify(args))),
      tool("__slow", (_args, signal) =>
        new Promise((resolve, reject) => {
          slow?.started();
          if (slow?.hang && !slow.hang()) return resolve("slow done");
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        })),
    ],
    close: () => Promise.resolve(),
  };
}

Deno.test("loop: a plain answer is recorded with its usage, turns and events", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Plain", PLAIN_PROMPT, { model: "openai/test-model" })]);
  try {
    model.script({ text: "Paris.", usage: { input: 12, output: 3, cached: 4 } });
    const run = await h.service.run({ agent: "Plain", environment: "default", task: "Capital of France?" });
    assertEquals([run.status, run.finish_reason, run.response, run.turns], [
      "completed",
      "stop",
      "Paris.",
      1,
    ]);
    assertEquals([run.input_tokens, run.output_tokens, run.cached_tokens, run.total_tokens], [12, 3, 4, 15]);
    assertEquals(run.model, "openai/test-model");
    // The system block goes as system text, the task as the user's message.
    const sent = model.requests[0].body.messages;
    assertEquals(sent[0], { role: "system", content: "You are a careful assistant." });
    assertEquals(sent[1], { role: "user", content: "Capital of France?" });
    const events = h.service.ledger.eventsAfter(run.id, 0).map((e) => e.type);
    assertEquals(events, ["run_started", "turn_started", "model_responded", "run_completed"]);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: tool output is cut with a marker, a tool error goes back as {error}, usage sums over turns", async () => {
  const model = startModelServer();
  const calls: string[] = [];
  const h = await agentHarness(model.url, [agentDef("Tools", TOOLS_PROMPT, { tools: ["__big", "__boom"] })], {
    mcpTools: () => Promise.resolve(testTools(calls)),
  });
  try {
    model.script(
      {
        calls: [{ name: "__big", args: {} }, { name: "__boom", args: { x: "1" } }],
        usage: { input: 10, output: 2 },
      },
      { text: "The disk is on fire.", usage: { input: 30, output: 5 } },
    );
    const run = await h.service.run({ agent: "Tools", environment: "default", task: "check" });
    assertEquals([run.status, run.response, run.turns, run.input_tokens, run.output_tokens], [
      "completed",
      "The disk is on fire.",
      2,
      40,
      7,
    ]);
    assertEquals(calls, ["__big", "__boom"]);
    const results = model.requests[1].body.messages.filter((m: { role: string }) => m.role === "tool");
    const big = results[0].content as string;
    assert(new TextEncoder().encode(big).length < 1024 + 100, `cut to max_tool_output: ${big.length}`);
    assertStringIncludes(big, "[output cut: ");
    assertStringIncludes(big, "of 100000 bytes not shown]");
    assertEquals(JSON.parse(results[1].content), { error: "disk on fire" });
    const recorded = h.service.ledger.toolCalls(run.id);
    assertEquals(recorded.map((c) => [c.name, c.status, c.output_bytes, c.truncated, c.error]), [
      ["__big", "completed", 100_000, 1, null],
      ["__boom", "failed", JSON.stringify({ error: "disk on fire" }).length, 0, "disk on fire"],
    ]);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: max_steps caps the turns; the partial answer is kept and the finish reason says so", async () => {
  const model = startModelServer();
  const calls: string[] = [];
  const h = await agentHarness(model.url, [
    agentDef("Loopy", TOOLS_PROMPT, { max_steps: 2, tools: ["__echo"] }),
  ], {
    mcpTools: () => Promise.resolve(testTools(calls)),
  });
  try {
    model.script(
      { text: "Looking…", calls: [{ name: "__echo", args: { x: "a" } }] },
      { text: "Still looking…", calls: [{ name: "__echo", args: { x: "b" } }] },
      { text: "never asked" },
    );
    const run = await h.service.run({ agent: "Loopy", environment: "default", task: "loop" });
    assertEquals([run.status, run.finish_reason, run.response, run.turns], [
      "completed",
      "max_steps",
      "Still looking…",
      2,
    ]);
    assertEquals(model.requests.length, 2);
  } finally {
    await h.close();
    await model.close();
  }
});

const JSON_PROMPT = `---
model: openai/test-model
output:
  format: json
---
{{userInput}}
`;
const schema = {
  type: "object",
  properties: { severity: { enum: ["low", "high"] } },
  required: ["severity"],
};

Deno.test("loop: structured output — valid, repaired after one bad answer, invalid after the repair", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Triage", JSON_PROMPT, { output_schema: schema })]);
  try {
    model.script({ text: '{"severity":"high"}' });
    const ok = await h.service.run({ agent: "Triage", environment: "default", task: "rate it" });
    assertEquals([ok.status, JSON.parse(ok.result!)], ["completed", { severity: "high" }]);
    assertStringIncludes(model.requests[0].body.messages[0].content, "Respond with ONLY valid JSON");

    model.script({ text: "It is bad." }, { text: '```json\n{"severity":"low"}\n```' });
    const fixed = await h.service.run({ agent: "Triage", environment: "default", task: "rate it" });
    assertEquals([fixed.status, fixed.finish_reason, JSON.parse(fixed.result!), fixed.turns], [
      "completed",
      "stop",
      { severity: "low" },
      2,
    ]);
    const repair = model.requests[2].body.messages.at(-1);
    assertEquals(repair.role, "user");
    assertStringIncludes(repair.content, "not valid JSON matching the required JSON Schema");

    model.script({ text: '{"severity":"urgent"}' }, { text: '{"sev":"high"}' });
    const bad = await h.service.run({ agent: "Triage", environment: "default", task: "rate it" });
    assertEquals([bad.status, bad.finish_reason, bad.result], ["failed", "output_invalid", null]);
    const error = JSON.parse(bad.error!);
    assertEquals(error.code, "agent_output_invalid");
    assertStringIncludes(error.message, "required property 'severity'");
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: cancel aborts the model call in flight, and a running tool", async () => {
  const model = startModelServer();
  let toolStarted!: () => void;
  const started = new Promise<void>((r) => (toolStarted = r));
  const h = await agentHarness(model.url, [agentDef("Slow", TOOLS_PROMPT, { tools: ["__slow"] })], {
    mcpTools: () => Promise.resolve(testTools([], { started: () => toolStarted() })),
  });
  try {
    model.script({ hold: new Promise(() => {}), text: "never" });
    const a = await h.service.start({ agent: "Slow", environment: "default", task: "wait" });
    await model.waitForRequests(1);
    h.service.cancel(a.run.id, "user changed their mind");
    const canceled = await a.done;
    assertEquals([canceled.status, canceled.finish_reason], ["canceled", "canceled"]);
    assertEquals(JSON.parse(canceled.error!).message, "user changed their mind");
    assertEquals(model.requests.length, 1, "the held call was abandoned, not retried");

    model.script({ calls: [{ name: "__slow", args: {} }] });
    const b = await h.service.start({ agent: "Slow", environment: "default", task: "wait" });
    await started;
    h.service.cancel(b.run.id);
    const stopped = await b.done;
    assertEquals([stopped.status, stopped.finish_reason], ["canceled", "canceled"]);
    await assertRejects(() => Promise.resolve(h.service.cancel(b.run.id)), StationError, "has already ended");
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: the run's timeout ends a stuck model call with finish reason timeout", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Stuck", PLAIN_PROMPT, { timeout_ms: 300 })]);
  try {
    model.script({ hold: new Promise(() => {}) });
    const run = await h.service.run({ agent: "Stuck", environment: "default", task: "hang" });
    assertEquals([run.status, run.finish_reason, JSON.parse(run.error!).code], [
      "failed",
      "timeout",
      "agent_timeout",
    ]);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: a child agent is a tool __agent_<name>; its run is recorded under the parent's", async () => {
  const model = startModelServer();
  const parent = agentDef("Boss", PLAIN_PROMPT, { agents: ["Helper Bot"] });
  const child = agentDef("Helper Bot", PLAIN_PROMPT, { description: "knows capitals" });
  const h = await agentHarness(model.url, [parent, child]);
  try {
    model.script(
      (req) => {
        assertEquals(req.body.tools.map((t: { function: { name: string } }) => t.function.name), [
          "__agent_helper_bot",
        ]);
        return { calls: [{ name: "__agent_helper_bot", args: { task: "capital of Peru?" } }] };
      },
      { text: "Lima." },
      { text: "The helper says Lima." },
    );
    const run = await h.service.run({ agent: "Boss", environment: "default", task: "ask" });
    assertEquals([run.status, run.response], ["completed", "The helper says Lima."]);
    assertEquals(model.requests[1].body.messages.at(-1), { role: "user", content: "capital of Peru?" });
    const [call] = h.service.ledger.toolCalls(run.id);
    assertEquals([call.name, call.output], ["__agent_helper_bot", "Lima."]);
    const childRun = h.service.ledger.byParentCall(run.id, call.call_id)!;
    assertEquals([childRun.agent, childRun.status, childRun.response], ["Helper Bot", "completed", "Lima."]);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: a missing API key is an error before any run exists, naming the variable", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [
    agentDef("Claude", PLAIN_PROMPT, { model: "anthropic/claude-x" }),
  ]);
  try {
    const err = await assertRejects(
      () => h.service.start({ agent: "Claude", environment: "default", task: "hi" }),
      StationError,
    ) as StationError;
    assertEquals(err.code, "model_api_key_missing");
    assertStringIncludes(err.hint!, "ANTHROPIC_API_KEY");
    assertEquals(h.service.ledger.list({ limit: 10 }).runs.length, 0);
    assertEquals(model.requests.length, 0);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: the Anthropic messages protocol, with a tool call, through ai.base_url", async () => {
  const model = startModelServer();
  const calls: string[] = [];
  const h = await agentHarness(
    model.url,
    [agentDef("Claude", TOOLS_PROMPT, { model: "anthropic/claude-test", tools: ["__echo"] })],
    { provider: "anthropic", mcpTools: () => Promise.resolve(testTools(calls)) },
  );
  try {
    model.script({
      calls: [{ name: "__echo", args: { x: "hi" } }],
      usage: { input: 8, output: 2, cached: 3 },
    }, {
      text: "echoed",
    });
    const run = await h.service.run({ agent: "Claude", environment: "default", task: "echo hi" });
    assertEquals([run.status, run.response, calls], ["completed", "echoed", ["__echo"]]);
    assertEquals(model.requests.map((r) => r.protocol), ["anthropic", "anthropic"]);
    assertEquals(model.requests[0].body.system[0].text, "Use your tools.");
    const result = model.requests[1].body.messages.at(-1).content[0];
    assertEquals([result.type, result.content], ["tool_result", JSON.stringify({ x: "hi" })]);
    assertEquals(run.cached_tokens, 3);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: a run interrupted mid-tool resumes from its checkpoints — no model call or finished tool repeated", async () => {
  const model = startModelServer();
  const calls: string[] = [];
  let toolStarted!: () => void;
  const started = new Promise<void>((r) => (toolStarted = r));
  let hang = true;
  const def = agentDef("Durable", TOOLS_PROMPT, { tools: ["__echo", "__slow"] });
  const h = await agentHarness(model.url, [def], {
    mcpTools: () => Promise.resolve(testTools(calls, { started: () => toolStarted(), hang: () => hang })),
  });
  try {
    model.script({ calls: [{ name: "__echo", args: { x: "1" } }, { name: "__slow", args: {} }] });
    const a = await h.service.start({ agent: "Durable", environment: "default", task: "work" });
    await started;
    await h.service.stop(); // the station stops: the run stays `running`
    assertEquals(h.service.ledger.get(a.run.id)!.status, "running");

    // The restarted station runs only what was not finished: the slow tool (now quick), then turn 2.
    hang = false;
    const again = h.restart();
    model.script({ text: "all done" });
    again.resumeOrphans();
    const ended = await again.wait(a.run.id);
    assertEquals([ended.status, ended.response, ended.turns], ["completed", "all done", 2]);
    assertEquals(model.requests.length, 2, "turn 1 was not sent again");
    assertEquals(calls.filter((c) => c === "__echo").length, 1, "the finished echo did not run again");
    assertEquals(calls.filter((c) => c === "__slow").length, 2, "the interrupted call ran again");
    const types = again.ledger.eventsAfter(a.run.id, 0).map((e) => e.type);
    assert(types.includes("run_resumed"), types.join());
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: a step attempt (or parent tool call) that already started a run gets that run back, not a second", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Plain", PLAIN_PROMPT)]);
  try {
    model.script({ text: "once" });
    const step = { runId: "run_1", path: "ask", visit: 1, attempt: 1 };
    const first = await h.service.run({ agent: "Plain", environment: "default", task: "t", step });
    const again = await h.service.run({ agent: "Plain", environment: "default", task: "t", step });
    assertEquals([again.id, again.response, model.requests.length], [first.id, "once", 1]);
    assertEquals(h.service.ledger.byWorkflowRun("run_1").length, 1);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: an agent that calls itself is stopped at the nesting bound, the error fed back", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Echo", PLAIN_PROMPT, { agents: ["Echo"] })]);
  try {
    model.route((r) => {
      const tool = r.body.messages.filter((m: { role: string }) => m.role === "tool").at(-1);
      return tool
        ? { text: `got: ${tool.content}` }
        : { calls: [{ name: "__agent_echo", args: { task: "again" } }] };
    });
    const run = await h.service.run({ agent: "Echo", environment: "default", task: "recurse" });
    assertEquals(run.status, "completed");
    assertStringIncludes(run.response!, "agents nest at most 5 deep");
    assertEquals(h.service.ledger.list({ agent: "Echo", limit: 50 }).runs.length, 6);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: variables are checked against the input schema before a run exists, and rendered", async () => {
  const model = startModelServer();
  const source =
    `---\nmodel: openai/test-model\n---\n{{role "system"}}\nYou help team {{team}}.\n{{role "user"}}\n{{userInput}}\n`;
  const input_schema = { type: "object", properties: { team: { type: "string" } }, required: ["team"] };
  const h = await agentHarness(model.url, [agentDef("Team", source, { input_schema })]);
  try {
    const err = await assertRejects(
      () => h.service.start({ agent: "Team", environment: "default", task: "hi", variables: { team: 3 } }),
      StationError,
    ) as StationError;
    assertEquals(err.code, "agent_input_invalid");
    assertStringIncludes(err.message, "/team must be string");
    assertEquals(h.service.ledger.list({ limit: 5 }).runs.length, 0);
    model.script({ text: "ok" });
    await h.service.run({ agent: "Team", environment: "default", task: "hi", variables: { team: "ops" } });
    assertEquals(model.requests[0].body.messages[0].content, "You help team ops.");
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("loop: under fsync/step, no model call or tool call begins before the turns and results it follows are synced", async () => {
  const model = startModelServer();
  const calls: string[] = [];
  const h = await agentHarness(model.url, [agentDef("Tools", TOOLS_PROMPT, { tools: ["__echo"] })], {
    mcpTools: () => Promise.resolve(testTools(calls, undefined, () => unsynced.push(behind()))),
    durability: true,
  });
  // How far the ledger's commits are ahead of the last finished WAL sync when a call begins (0: none is).
  const behind = () => Math.max(0, h.sync.written() - h.sync.synced);
  const unsynced: number[] = [];
  try {
    const turn = (reply: Reply) => () => (unsynced.push(behind()), reply);
    model.script(
      turn({ calls: [{ name: "__echo", args: { x: "1" } }], usage: { input: 10, output: 2 } }),
      turn({ calls: [{ name: "__echo", args: { x: "2" } }], usage: { input: 10, output: 2 } }),
      turn({ text: "done", usage: { input: 10, output: 2 } }),
    );
    const run = await h.service.run({ agent: "Tools", environment: "default", task: "go" });
    assertEquals([run.status, run.turns, calls], ["completed", 3, ["__echo", "__echo"]]);
    // Three model calls and two tool calls, each found every commit before it on disk.
    assertEquals(unsynced, [0, 0, 0, 0, 0]);
    assert(h.sync.syncs >= 5, `syncs: ${h.sync.syncs}`);
  } finally {
    await h.close();
    await model.close();
  }
});
