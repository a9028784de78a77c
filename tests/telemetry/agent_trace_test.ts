import { StationClient } from "../../src/client/http.ts";
import { getRun, startRun } from "../../src/client/workflow_runs.ts";
import { listAgentRuns } from "../../src/client/agent_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { startServe, waitFor } from "../helpers/stn.ts";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp_receiver.ts";

const agentFile = (system: string, extra = "") =>
  `---\nmodel: openai/test-model\nmax_steps: 3\n${extra}---\n{{role "system"}}\n${system}\n{{role "user"}}\n{{userInput}}\n`;

Deno.test("traces: an agent step's run, its model calls and its tool calls (MCP, cut, failed, a child agent) join the run's trace", async () => {
  const receiver = startOtlpReceiver();
  const model = startModelServer();
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n` +
      `agents:\n  max_tool_output: 1000\n`,
  );
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.mkdirSync(`${env}/mcp-configs`, { recursive: true });
  Deno.writeTextFileSync(
    `${env}/mcp-configs/tt.json`,
    JSON.stringify({ mcpServers: { tt: stdioServerEntry() } }),
  );
  Deno.writeTextFileSync(
    `${env}/agents/Boss.prompt`,
    agentFile("You are the boss.", "tools: [__big, __fail]\nagents: [Helper]\n"),
  );
  Deno.writeTextFileSync(`${env}/agents/Helper.prompt`, agentFile("You help."));
  const system = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");
  model.route((r) => {
    if (system(r).includes("You help")) return { text: "helped", usage: { input: 5, output: 2 } };
    if (!r.body.messages.some((m: { role: string }) => m.role === "tool")) {
      return {
        calls: [
          { name: "__big", args: { bytes: 5000 } },
          { name: "__fail", args: {} },
          { name: "__agent_helper", args: { task: "help me" } },
        ],
        usage: { input: 21, output: 7, cached: 3 },
      };
    }
    return { text: "all done", usage: { input: 40, output: 4 } };
  });
  const serve = await startServe({
    env: {
      ...home.env,
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    home: home.home,
  });
  try {
    const client = new StationClient(serve.url);
    // The MCP config is synced before the agents, so Boss's tools are known.
    await client.json("POST", "/api/v1/sync", { body: { trust: true } });
    const run = await startRun(client, {
      definition: {
        id: "asked",
        states: [{ id: "ask", type: "agent", agent: "Boss", task: "${q}" }],
      },
      input: { q: "split the work" },
    });
    assert(await waitFor(async () => (await getRun(client, run.id)).status === "completed", 30_000));
    const traceId = (await getRun(client, run.id)).trace_id;
    const [agentRun] = (await listAgentRuns(client, { workflow_run_id: run.id })).runs;
    assertEquals(agentRun.trace_id, traceId, "the agent run records its trace");

    const ofRun = () => receiver.spans.filter((s) => s.traceId === traceId);
    const find = (name: string) => ofRun().find((s) => s.name === name);
    assert(
      await waitFor(() => ofRun().filter((s) => s.name.startsWith("agent.run ")).length === 2, 10_000),
      `both agent runs were exported: ${ofRun().map((s) => s.name)}`,
    );
    const spans = ofRun();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const chain = (s: ReceivedSpan | undefined) => {
      const names: string[] = [];
      for (let p = s && byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) names.push(p.name);
      return names;
    };
    const boss = find("agent.run Boss")!;
    assertEquals(chain(boss), ["workflow.step ask", "workflow.run asked", "POST /api/v1/workflow-runs"]);
    assertEquals(
      [
        boss.attributes["stn.agent.run.id"],
        boss.attributes["stn.agent.status"],
        boss.attributes["stn.run.id"],
      ],
      [agentRun.run_id, "completed", run.id],
    );

    const calls = spans.filter((s) =>
      s.name === "agent.model openai/test-model" && s.parentSpanId === boss.spanId
    );
    assertEquals(calls.length, 2, "two model calls of Boss");
    const first = calls.find((s) => s.attributes["stn.agent.turn"] === 1)!;
    assertEquals(
      ["input_tokens", "output_tokens"].map((k) => first.attributes[`gen_ai.usage.${k}`]),
      [21, 7],
    );
    assertEquals(first.attributes["stn.model.cached_tokens"], 3);
    assertEquals(first.attributes["stn.model.finish_reason"], "tool-calls");
    assertEquals(first.attributes["gen_ai.request.model"], "openai/test-model");

    const big = find("agent.tool __big")!;
    assertEquals(big.parentSpanId, boss.spanId);
    assertEquals(
      [
        big.attributes["stn.mcp.server"],
        big.attributes["stn.tool.truncated"],
        big.attributes["stn.tool.output_bytes"],
      ],
      ["tt", true, 5000],
    );
    const fail = find("agent.tool __fail")!;
    assertEquals(
      [fail.attributes["stn.mcp.server"], fail.status.code],
      ["tt", 2],
      "a tool error marks its span",
    );
    const helper = find("agent.run Helper")!;
    assertEquals(chain(helper).slice(0, 2), ["agent.tool __agent_helper", "agent.run Boss"]);
    assertEquals(find("agent.tool __agent_helper")!.attributes["stn.mcp.server"], undefined);
    assert(
      spans.some((s) => s.name === "agent.model openai/test-model" && s.parentSpanId === helper.spanId),
      "the child agent's model call is under its run",
    );
  } finally {
    await serve.stop("SIGKILL").catch(() => {});
    await model.close();
    await home.cleanup();
    await receiver.close();
  }
});
