import { contextPlan, modelContextWindow } from "../../src/agents/context.ts";
import type { Toolbox } from "../../src/agents/types.ts";
import { agentDef, agentHarness } from "../helpers/agents.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type ModelRequest, type Reply, startModelServer } from "../helpers/model_server.ts";

const PROMPT = `---
model: openai/test-model
tools: ["__ten"]
---
{{role "system"}}
Read the log forty times.
{{role "user"}}
{{userInput}}
`;

const LIMIT = 32_000;
const TURNS = 40;
const TEN_KB = "0123456789abcdef".repeat(640);

/** One tool returning 10 KB each call. */
function tenKbTool(): Toolbox {
  return {
    tools: [{
      name: "__ten",
      description: "returns 10 KB of log",
      inputSchema: { type: "object", properties: {} },
      call: () => Promise.resolve(TEN_KB),
    }],
    close: () => Promise.resolve(),
  };
}

const toolMessages = (r: ModelRequest) =>
  (r.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool");

/** The scripted model: calls the tool until it has seen 40 results, then answers. */
function fortyCalls(r: ModelRequest): Reply {
  const seen = toolMessages(r).length;
  return seen < TURNS ? { calls: [{ name: "__ten", args: {} }] } : { text: `read ${seen} logs` };
}

function harness(url: string, context: Record<string, unknown>, provider?: "anthropic") {
  return agentHarness(url, [
    agentDef("Reader", PROMPT, {
      tools: ["__ten"],
      max_steps: TURNS + 1,
      context,
      model: `${provider ?? "openai"}/test-model`,
    }),
  ], { mcpTools: () => Promise.resolve(tenKbTool()), maxToolOutput: 10_240, provider });
}

Deno.test("context: 40 turns of 10 KB tool output fit a 32k-token model; old outputs become a marker", async () => {
  const model = startModelServer({ contextLimit: LIMIT });
  model.route(fortyCalls);
  const h = await harness(model.url, { max_tokens: LIMIT });
  try {
    const run = await h.service.run({ agent: "Reader", environment: "default", task: "go" });
    assertEquals([run.status, run.response, run.turns], ["completed", `read ${TURNS} logs`, TURNS + 1]);
    assert(model.requests.every((r) => r.tokens <= LIMIT), "no request passed the model's window");
    // The last request: the latest outputs whole, the oldest replaced by the marker the model can read.
    const last = toolMessages(model.requests.at(-1)!).map((m) => m.content);
    assertEquals(last.length, TURNS);
    assertEquals(last[0], "[tool output of __ten at turn 1 removed to fit the context window: 10240 bytes]");
    assertEquals(last.at(-1), TEN_KB);
    assertEquals(last.at(-2), TEN_KB, "the latest turns are kept (keep_turns 2)");
    // The stored history says which outputs went, and when.
    const calls = h.service.ledger.toolCalls(run.id);
    const removed = calls.filter((c) => c.removed_at_turn !== null);
    assert(removed.length > 20, `most outputs were removed: ${removed.length}`);
    assert(removed.every((c) => c.removed_at_turn! > c.turn + 2), "never one of the latest two turns");
    assertEquals(calls.filter((c) => c.removed_at_turn === null).length, TURNS - removed.length);
    const compacted = h.service.ledger.eventsAfter(run.id, 0).filter((e) => e.type === "context_compacted");
    assert(compacted.length > 0);
    const first = JSON.parse(compacted[0].data!);
    assert(first.estimated_tokens > 0.8 * LIMIT && first.fitted_tokens <= 0.8 * LIMIT, compacted[0].data!);
    assertEquals(first.removed[0], { call_id: calls[0].call_id, name: "__ten", turn: 1, bytes: 10_240 });
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("context: without compaction the model's own limit error is reported as context_overflow", async () => {
  for (const provider of ["openai", "anthropic"] as const) {
    const model = startModelServer({ contextLimit: LIMIT });
    model.route(fortyCalls);
    const h = await harness(
      model.url,
      { max_tokens: LIMIT, strategy: "none" },
      provider === "anthropic" ? provider : undefined,
    );
    try {
      const run = await h.service.run({ agent: "Reader", environment: "default", task: "go" });
      assertEquals([run.status, run.finish_reason], ["failed", "error"], provider);
      const error = JSON.parse(run.error!);
      assertEquals(error.code, "context_overflow", provider);
      assertStringIncludes(error.message, `context.max_tokens ${LIMIT}, strategy none`);
      assertStringIncludes(
        error.message,
        provider === "openai" ? "maximum context length" : "prompt is too long",
      );
      assert(run.turns > 5 && run.turns < TURNS, `it ran until the window was full: ${run.turns}`);
    } finally {
      await h.close();
      await model.close();
    }
  }
});

Deno.test("context: a run that cannot fit even with old outputs removed fails before sending, naming the sizes", async () => {
  const model = startModelServer({ contextLimit: LIMIT });
  model.route(fortyCalls);
  // Every output is within the kept turns: nothing may go.
  const h = await harness(model.url, { max_tokens: LIMIT, keep_turns: 100 });
  try {
    const run = await h.service.run({ agent: "Reader", environment: "default", task: "go" });
    const error = JSON.parse(run.error!);
    assertEquals([run.status, error.code], ["failed", "context_overflow"]);
    assertStringIncludes(error.message, `over the context window of ${LIMIT}`);
    assert(/needs about \d+ tokens/.test(error.message), error.message);
    assert(model.requests.every((r) => r.tokens <= LIMIT), "the request that would not fit was not sent");
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("context: a run resumed after a crash sends the same compacted history it would have sent", async () => {
  /** The tool messages of a request as they look to the model: whole output or a marker. */
  const shape = (r: ModelRequest) => toolMessages(r).map((m) => m.content === TEN_KB ? "output" : m.content);
  const straight = startModelServer({ contextLimit: LIMIT });
  straight.route(fortyCalls);
  const a = await harness(straight.url, { max_tokens: LIMIT });
  const crashing = startModelServer({ contextLimit: LIMIT });
  let hold = true;
  crashing.route((r) =>
    hold && toolMessages(r).length === 25 ? { hold: new Promise(() => {}) } : fortyCalls(r)
  );
  const b = await harness(crashing.url, { max_tokens: LIMIT });
  try {
    await a.service.run({ agent: "Reader", environment: "default", task: "go" });
    const started = await b.service.start({ agent: "Reader", environment: "default", task: "go" });
    await crashing.waitForRequests(26);
    await b.service.stop();
    hold = false;
    const again = b.restart();
    again.resumeOrphans();
    const ended = await again.wait(started.run.id);
    assertEquals([ended.status, ended.turns], ["completed", TURNS + 1]);
    const resumed = crashing.requests.slice(26);
    assertEquals(resumed.map(shape), straight.requests.slice(25).map(shape));
  } finally {
    await a.close();
    await b.close();
    await straight.close();
    await crashing.close();
  }
});

Deno.test("context: the window comes from the agent, else config, else the model's known window", () => {
  assertEquals(modelContextWindow("anthropic/claude-sonnet-4-5"), 200_000);
  assertEquals(modelContextWindow("openai/gpt-4o-mini"), 128_000);
  assertEquals(modelContextWindow("openai/gpt-4"), 8_192);
  assertEquals(modelContextWindow("openai-compatible/llama3"), 32_768);
  assertEquals(contextPlan(undefined, undefined, "openai/gpt-4o"), {
    max_tokens: 128_000,
    threshold: 0.8,
    strategy: "drop_tool_outputs",
    keep_turns: 2,
  });
  assertEquals(contextPlan({ max_tokens: 9000 }, { max_tokens: 50_000, strategy: "none" }, "openai/gpt-4o"), {
    max_tokens: 9000,
    threshold: 0.8,
    strategy: "none",
    keep_turns: 2,
  });
});
