/**
 * Agent loop benchmark (no station needed; the model is the tests' scripted OpenAI-protocol server):
 *   (a) the same 5-turn run (4 tool-call turns, then an answer) through stn's loop — which renders the
 *       prompt, checkpoints every turn and tool result in a SQLite ledger and appends its events —
 *       against a bare AI SDK `generateText` with the same tool and `stopWhen: stepCountIs(5)`, to the
 *       same server: time per turn and the ratio;
 *   (b) the per-turn checkpoint alone: the ledger writes of one turn with one tool call;
 *   (c) an MCP tool call round trip through the loop — the same run with `__echo` served by the tests' MCP
 *       server over Streamable HTTP (synced as `stn sync` does, the connection opened per run as a run
 *       does) instead of in-process — per call, against a bare SDK client making the same calls on its own
 *       connection per run (and on one kept open).
 *
 *   deno run -A scripts/bench/agents.ts [runs=40]
 */
import { join } from "node:path";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { createModels } from "../../src/agents/providers.ts";
import { AgentService } from "../../src/agents/service.ts";
import type { AgentDefinition } from "../../src/agents/types.ts";
import { openDatabase } from "../../src/db/database.ts";
import { openMcpToolbox, syncMcpServers } from "../../src/mcp/mod.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startHttpMcpServer } from "../../tests/helpers/mcp_http_server.ts";
import { startModelServer } from "../../tests/helpers/model_server.ts";

const RUNS = Number(Deno.args[0] ?? 40);
const TURNS = 5;

const model = startModelServer();
model.route((r) => {
  const results = r.body.messages.filter((m: { role: string }) => m.role === "tool").length;
  return results < TURNS - 1
    ? { calls: [{ name: "__echo", args: { x: String(results) } }] }
    : { text: "done" };
});
const ai = {
  provider: "openai" as const,
  model: "openai/bench",
  base_url: model.url,
  api_key: "sk-bench",
  limits: {},
  prices: {},
};
const echo = (args: unknown) => Promise.resolve(JSON.stringify(args));

const dir = await Deno.makeTempDir({ prefix: "stn-bench-agents-" });
const db = openDatabase(join(dir, "station.db"));
const def: AgentDefinition = {
  name: "Bench",
  environment: "default",
  path: "/bench/Bench.prompt",
  checksum: "bench",
  model: "openai/bench",
  max_steps: TURNS,
  description: "",
  tags: [],
  tools: ["__echo"],
  agents: [],
  timeout_ms: 60_000,
  source: '---\nmodel: openai/bench\n---\n{{role "system"}}\nUse the tool.\n{{role "user"}}\n{{userInput}}\n',
  extra: {},
};
const service = new AgentService({
  db,
  config: { ai, agents: { max_tool_output: 10_240, default_max_steps: TURNS, timeout: 60_000 } },
  env: {},
  source: () => def,
  mcpTools: () =>
    Promise.resolve({
      tools: [{ name: "__echo", description: "echo", inputSchema: { type: "object" }, call: echo }],
      close: () => Promise.resolve(),
    }),
});
const bare = createModels(ai, {}).resolve("openai/bench").model;
const tools = {
  __echo: tool({ description: "echo", inputSchema: jsonSchema({ type: "object" }), execute: echo }),
};

const ours = async () => {
  const run = await service.run({ agent: "Bench", environment: "default", task: "go" });
  if (run.turns !== TURNS || run.response !== "done") throw new Error(`unexpected run: ${run.turns} turns`);
};
const baseline = async () => {
  const r = await generateText({
    model: bare,
    system: "Use the tool.",
    messages: [{ role: "user", content: "go" }],
    tools,
    stopWhen: stepCountIs(TURNS),
  });
  if (r.steps.length !== TURNS || r.text !== "done") throw new Error(`unexpected: ${r.steps.length} steps`);
};

for (let i = 0; i < 5; i++) await ours(), await baseline(); // warm-up
let tOurs = 0, tBare = 0;
for (let i = 0; i < RUNS; i++) {
  let t = performance.now();
  await baseline();
  tBare += performance.now() - t;
  t = performance.now();
  await ours();
  tOurs += performance.now() - t;
}
const perTurn = (ms: number) => ms / RUNS / TURNS;
console.log(`(a) ${RUNS} runs of ${TURNS} turns against the scripted server`);
console.log(`    bare generateText (floor): ${perTurn(tBare).toFixed(2)} ms per turn`);
console.log(
  `    stn agent loop:            ${perTurn(tOurs).toFixed(2)} ms per turn — ${
    (tOurs / tBare).toFixed(2)
  }× the floor`,
);

const ledger = service.ledger;
const run = ledger.create({
  agent: "Bench",
  environment: "default",
  model: "openai/bench",
  task: "t",
  variables: {},
  plan: {},
});
const N = 2000;
const messages = JSON.stringify([{
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: "c", toolName: "__echo", input: { x: "1" } }],
}]);
const usage = { input_tokens: 10, output_tokens: 5, cached_tokens: 0, total_tokens: 15 };
const t = performance.now();
for (let turn = 1; turn <= N; turn++) {
  ledger.event(run.id, "turn_started", { turn });
  ledger.turnCompleted(
    {
      run_id: run.id,
      turn,
      messages,
      text: "",
      finish_reason: "tool-calls",
      duration_ms: 1,
      cost_usd: null,
      ...usage,
    },
    { turn, usage },
  );
  ledger.toolStarted({
    run_id: run.id,
    call_id: `c${turn}`,
    turn,
    position: 0,
    name: "__echo",
    arguments: "{}",
  });
  ledger.toolFinished(run.id, `c${turn}`, {
    output: "{}",
    output_bytes: 2,
    truncated: false,
    duration_ms: 0,
  });
}
const each = (performance.now() - t) / N;
console.log(
  `(b) checkpoint of one turn with one tool call (4 transactions, WAL): ${(each * 1000).toFixed(0)} µs`,
);
console.log(`    = ${(each / perTurn(tBare) * 100).toFixed(1)}% of a bare turn against a local server`);

// (c) The same run with the echo tool behind a real MCP server.
const mcp = await startHttpMcpServer();
await Deno.writeTextFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { bench: { url: mcp.url } } }));
const synced = await syncMcpServers(db, { environment: "default", directory: dir }, { trust: true });
if (synced.servers[0]?.status !== "ok") throw new Error(`MCP sync failed: ${JSON.stringify(synced)}`);
const viaMcp = new AgentService({
  db,
  config: { ai, agents: { max_tool_output: 10_240, default_max_steps: TURNS, timeout: 60_000 } },
  env: {},
  source: () => def,
  mcpTools: (env, d, signal) => openMcpToolbox(db, env, d.tools, { signal }),
});
const oursMcp = async () => {
  const r = await viaMcp.run({ agent: "Bench", environment: "default", task: "go" });
  if (r.turns !== TURNS || r.response !== "done") {
    throw new Error(`unexpected MCP run: ${r.status} ${r.error}`);
  }
};
const CALLS = TURNS - 1;
const connect = async () => {
  const c = new Client({ name: "bench", version: "1" });
  await c.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
  return c;
};
const bareCalls = async (c: Client) => {
  for (let i = 0; i < CALLS; i++) await c.callTool({ name: "echo", arguments: { x: String(i) } });
};
const kept = await connect();
for (let i = 0; i < 5; i++) await oursMcp(), await ours(), await bareCalls(kept); // warm-up
let tMcp = 0, tLocal = 0, tClient = 0, tKept = 0;
for (let i = 0; i < RUNS; i++) {
  let t = performance.now();
  await ours();
  tLocal += performance.now() - t;
  t = performance.now();
  await oursMcp();
  tMcp += performance.now() - t;
  t = performance.now();
  const c = await connect();
  await bareCalls(c);
  await c.close();
  tClient += performance.now() - t;
  t = performance.now();
  await bareCalls(kept);
  tKept += performance.now() - t;
}
const perCall = (ms: number) => ms / RUNS / CALLS;
const loopCall = perCall(tMcp - tLocal);
console.log(`(c) MCP echo over Streamable HTTP, ${RUNS} runs × ${CALLS} calls`);
console.log(`    bare SDK client, kept connection:        ${perCall(tKept).toFixed(2)} ms per call`);
console.log(`    bare SDK client, a connection per run:   ${perCall(tClient).toFixed(2)} ms per call`);
console.log(
  `    through the loop (run with MCP − in-process): ${loopCall.toFixed(2)} ms per call — ${
    (loopCall / perCall(tClient)).toFixed(2)
  }× the bare client with a connection per run`,
);
await kept.close();
await viaMcp.stop();
await mcp.close();

await service.stop();
db.close();
await model.close();
await Deno.remove(dir, { recursive: true });
