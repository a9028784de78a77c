import type { AgentTool } from "../../src/agents/types.ts";
import { agentRunView } from "../../src/agents/views.ts";
import { parseAgent } from "../../src/agents/definition/load.ts";
import { costOf, DEFAULT_PRICES, formatUsd, priceOf } from "../../src/telemetry/cost.ts";
import { processMetrics } from "../../src/telemetry/metrics.ts";
import { agentDef, agentHarness, PLAIN_PROMPT } from "../helpers/agents.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startModelServer } from "../helpers/model_server.ts";

/** Asserts two dollar amounts are equal up to floating-point rounding. */
function assertAlmostEquals(actual: number, expected: number, epsilon: number): void {
  assert(Math.abs(actual - expected) <= epsilon, `${actual} is not ${expected}`);
}

const PRICES = {
  "openai/test-model": { input_per_million: 2, output_per_million: 8, cached_input_per_million: 0.5 },
};

const TOOL_PROMPT = `---
model: openai/test-model
tools: ["__echo"]
---
{{role "system"}}
Use your tools.
{{role "user"}}
{{userInput}}
`;

const echo = {
  mcpTools: () =>
    Promise.resolve({
      tools: [
        {
          name: "__echo",
          description: "echo",
          inputSchema: { type: "object" },
          call: (args: unknown) => Promise.resolve(JSON.stringify(args)),
        } satisfies AgentTool,
      ],
      close: () => Promise.resolve(),
    }),
};

/** The value of `stn_agent_cost_usd_total` for this agent (0 before its first call). */
async function costMetric(agent: string): Promise<number> {
  const family = processMetrics.find((f) => f.name === "stn_agent_cost_usd_total")!;
  const samples = await family.samples();
  return samples.find((s) => s.labels.some(([k, v]) => k === "agent" && v === agent))?.value ?? 0;
}

Deno.test("cost: a run's cost is the price table's arithmetic over its turns' recorded tokens", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Priced", TOOL_PROMPT, { model: "openai/test-model" })], {
    prices: PRICES,
    ...echo,
  });
  try {
    model.script(
      { calls: [{ name: "__echo", args: { x: "a" } }], usage: { input: 1_000, output: 200, cached: 400 } },
      { text: "done", usage: { input: 3_000, output: 500 } },
    );
    const before = await costMetric("Priced");
    const run = await h.service.run({ agent: "Priced", environment: "default", task: "go" });
    assertEquals(run.status, "completed");
    // turn 1: 600 input at $2/M, 400 cached at $0.5/M, 200 output at $8/M; turn 2: 3000 in, 500 out.
    const turn1 = (600 * 2 + 400 * 0.5 + 200 * 8) / 1e6;
    const turn2 = (3_000 * 2 + 500 * 8) / 1e6;
    const view = agentRunView(h.service.ledger, run, true);
    assertAlmostEquals(view.history![0].cost_usd!, turn1, 1e-12);
    assertAlmostEquals(view.history![1].cost_usd!, turn2, 1e-12);
    assertAlmostEquals(view.cost_usd!, turn1 + turn2, 1e-12);
    assertAlmostEquals(await costMetric("Priced") - before, turn1 + turn2, 1e-12);
    // The turn's event carries its cost too (what `stn agent run --follow` and the dashboard stream).
    const responded = h.service.ledger.eventsAfter(run.id, 0).filter((e) => e.type === "model_responded");
    assertAlmostEquals(JSON.parse(responded[0].data!).cost_usd, turn1, 1e-12);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("cost: a model with no known price has no cost (null), not a wrong one", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Plain", PLAIN_PROMPT, { model: "openai/test-model" })]);
  try {
    model.script({ text: "Paris.", usage: { input: 12, output: 3 } });
    const run = await h.service.run({ agent: "Plain", environment: "default", task: "Capital of France?" });
    assertEquals([run.status, run.cost_usd], ["completed", null]);
    assertEquals(agentRunView(h.service.ledger, run).cost_usd, null);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("cost: a run past its max_cost stops with budget_exceeded before its next model call", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [
    agentDef("Thrifty", TOOL_PROMPT, { model: "openai/test-model", max_cost: 0.001 }),
  ], { prices: PRICES, ...echo });
  try {
    // 1000 in + 200 out = $0.0036 > $0.001: the loop must not ask the model again.
    model.script(
      { calls: [{ name: "__echo", args: { x: "a" } }], usage: { input: 1_000, output: 200 } },
      { text: "never sent" },
    );
    const run = await h.service.run({ agent: "Thrifty", environment: "default", task: "go" });
    assertEquals([run.status, run.finish_reason, run.turns], ["failed", "error", 1]);
    const error = JSON.parse(run.error!);
    assertEquals(error.code, "budget_exceeded");
    assert(error.message.includes("max_cost $0.001"), error.message);
    assertEquals(model.requests.length, 1);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("cost: a caller's budget (an eval's) stops a run past it; a roomy one lets it finish", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Priced", TOOL_PROMPT, { model: "openai/test-model" })], {
    prices: PRICES,
    ...echo,
  });
  try {
    model.script(
      { calls: [{ name: "__echo", args: { x: "a" } }], usage: { input: 1_000, output: 200 } },
      { text: "fine", usage: { input: 10, output: 1 } },
      { calls: [{ name: "__echo", args: { x: "a" } }], usage: { input: 1_000, output: 200 } },
    );
    const roomy = await h.service.run({ agent: "Priced", environment: "default", task: "go", maxCost: 1 });
    assertEquals([roomy.status, roomy.response], ["completed", "fine"]);
    const tight = await h.service.run({
      agent: "Priced",
      environment: "default",
      task: "go",
      maxCost: 0.002,
    });
    assertEquals([tight.status, JSON.parse(tight.error!).code], ["failed", "budget_exceeded"]);
    assertEquals(model.requests.length, 3);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("cost: a workflow run's cost is the sum of its agent runs'; none started is 0", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Plain", PLAIN_PROMPT, { model: "openai/test-model" })], {
    prices: PRICES,
  });
  try {
    model.script({ text: "a", usage: { input: 100, output: 10 } }, {
      text: "b",
      usage: { input: 300, output: 30 },
    });
    const step = (path: string) => ({ runId: "run_wf", path, visit: 1, attempt: 1 });
    const a = await h.service.run({ agent: "Plain", environment: "default", task: "1", step: step("a") });
    const b = await h.service.run({ agent: "Plain", environment: "default", task: "2", step: step("b") });
    const costs = h.service.ledger.workflowRunCosts(["run_wf", "run_none"]);
    assertAlmostEquals(costs.get("run_wf")!, a.cost_usd! + b.cost_usd!, 1e-12);
    assertAlmostEquals(a.cost_usd! + b.cost_usd!, (400 * 2 + 40 * 8) / 1e6, 1e-12);
    assertEquals(costs.get("run_none"), 0);
  } finally {
    await h.close();
    await model.close();
  }
});

Deno.test("cost: the price table — overrides, dated ids take their family's price, unknown is undefined", () => {
  assertEquals(priceOf("openai/gpt-4o-mini"), DEFAULT_PRICES["openai/gpt-4o-mini"]);
  assertEquals(priceOf("openai/gpt-4o-mini-2024-07-18"), DEFAULT_PRICES["openai/gpt-4o-mini"]);
  assertEquals(
    priceOf("anthropic/claude-sonnet-4-5-20250929"),
    DEFAULT_PRICES["anthropic/claude-sonnet-4-5"],
  );
  assertEquals(priceOf("openai/gpt-4o", PRICES)?.input_per_million, 2.5);
  const own = { input_per_million: 9, output_per_million: 9 };
  assertEquals(priceOf("openai/gpt-4o", { "openai/gpt-4o": own }), own);
  assertEquals(priceOf("openai-compatible/llama3"), undefined);
  assertEquals(priceOf("openai/gpt-4"), undefined);
  assertAlmostEquals(
    costOf({ input_tokens: 1e6, output_tokens: 1e6, cached_tokens: 0 }, DEFAULT_PRICES["openai/gpt-4o"]),
    12.5,
    1e-12,
  );
  assertEquals([formatUsd(null), formatUsd(0), formatUsd(0.0000123), formatUsd(0.25), formatUsd(12.5)], [
    "-",
    "$0",
    "$0.000012",
    "$0.25",
    "$12.50",
  ]);
});

Deno.test("cost: max_cost in a .prompt's front matter is the agent's budget; a negative one is an error", async () => {
  const text = (v: string) => `---\nmodel: openai/gpt-4o\nmax_cost: ${v}\n---\nHi {{userInput}}\n`;
  const ok = await parseAgent(text("0.25"), { environment: "default", path: "/env/agents/a.prompt" });
  assertEquals(ok.definition?.max_cost, 0.25);
  const bad = await parseAgent(text("-1"), { environment: "default", path: "/env/agents/a.prompt" });
  assertEquals(bad.definition, undefined);
  assert(bad.errors.some((e) => e.path === "/max_cost"), JSON.stringify(bad.errors));
});
