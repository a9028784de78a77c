import { join } from "node:path";
import { syncMcpServers } from "../../src/mcp/mod.ts";
import { agentDef, type AgentHarness, agentHarness } from "../helpers/agents.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type HttpMcpServer, startHttpMcpServer } from "../helpers/mcp_http_server.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { type ModelServer, startModelServer } from "../helpers/model_server.ts";

/**
 * MCP tools through the agent loop, with REAL MCP servers: the test server over stdio (tools `__echo`…)
 * and over Streamable HTTP (prefix h_, tools `__h_echo`…), synced into the catalogue by `syncMcpServers`
 * as `stn sync` does. The only fake is the model (the scripted server).
 */

const toolsPrompt = (tools: string[]) =>
  `---
model: openai/test-model
tools: ${JSON.stringify(tools)}
max_steps: 4
---
{{role "system"}}
Use your tools.
{{role "user"}}
{{userInput}}
`;

interface Setup {
  model: ModelServer;
  http: HttpMcpServer;
  h: AgentHarness;
  cancelLog: string;
  close(): Promise<void>;
}

/** Two agents (stdio tools, HTTP tools) on a harness whose catalogue holds both servers and their extras. */
async function setup(): Promise<Setup> {
  const model = startModelServer();
  const http = await startHttpMcpServer({ prefix: "h_" });
  const stdio = ["__echo", "__big", "__fail", "__slow"];
  const web = stdio.map((t) => t.replace("__", "__h_"));
  const h = await agentHarness(model.url, [
    agentDef("Stdio", toolsPrompt(stdio), { tools: stdio }),
    agentDef("Web", toolsPrompt(web), { tools: web }),
  ], { maxToolOutput: 10 * 1024 });
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-env-" });
  const cancelLog = join(dir, "cancelled.log");
  await Deno.writeTextFile(
    join(dir, "servers.json"),
    JSON.stringify({
      mcpServers: {
        local: stdioServerEntry({ env: { MCP_TEST_CANCEL_LOG: cancelLog } }),
        web: { url: http.url },
      },
    }),
  );
  const report = await syncMcpServers(h.db, { environment: "default", directory: dir }, {
    trust: true,
    timeoutMs: 15_000,
  });
  assertEquals(report.servers.map((s) => s.status), ["ok", "ok"]);
  return {
    model,
    http,
    h,
    cancelLog,
    close: async () => {
      await h.close();
      await http.close();
      await model.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

for (const [agent, p] of [["Stdio", "__"], ["Web", "__h_"]] as const) {
  Deno.test(`mcp tools (${agent === "Stdio" ? "stdio" : "Streamable HTTP"}): only the listed tools, a call with arguments, an error fed back, 100 KB cut to 10 KB`, async () => {
    const s = await setup();
    try {
      s.model.script(
        {
          calls: [
            { name: `${p}echo`, args: { text: "hello mcp" } },
            { name: `${p}big`, args: {} },
            { name: `${p}fail`, args: { message: "no such file" } },
          ],
        },
        { text: "done" },
      );
      const run = await s.h.service.run({ agent, environment: "default", task: "use the tools" });
      assertEquals([run.status, run.response, run.turns], ["completed", "done", 2]);

      // The model was offered the agent's four tools, none of the servers' others (pid, env, mixed, h_header...).
      const offered = s.model.requests[0].body.tools.map((t: { function: { name: string } }) =>
        t.function.name
      );
      assertEquals(offered.sort(), [`${p}big`, `${p}echo`, `${p}fail`, `${p}slow`]);

      const results = s.model.requests[1].body.messages.filter((m: { role: string }) => m.role === "tool");
      assertEquals(results.length, 3);
      // The arguments reached the server: echo answers with them.
      assertEquals(JSON.parse(results[0].content), { text: "hello mcp" });
      // 100 KB cut to 10 KB, with the marker.
      const big = results[1].content as string;
      assert(big.startsWith("abcdefghij"), big.slice(0, 20));
      assertStringIncludes(big, `[output cut: ${102400 - 10240} of 102400 bytes not shown]`);
      assert(new TextEncoder().encode(big).length < 10240 + 100, `cut to 10 KB: ${big.length}`);
      // The tool error goes back to the model as {error}, the run goes on.
      const failed = JSON.parse(results[2].content) as { error: string };
      assertStringIncludes(failed.error, "fail: no such file");

      const recorded = s.h.service.ledger.toolCalls(run.id);
      assertEquals(recorded.map((c) => [c.name, c.status, c.output_bytes, c.truncated]), [
        [`${p}echo`, "completed", JSON.stringify({ text: "hello mcp" }).length, 0],
        [`${p}big`, "completed", 102400, 1],
        [`${p}fail`, "failed", results[2].content.length, 0],
      ]);
    } finally {
      await s.close();
    }
  });
}

Deno.test("mcp tools: canceling a run mid-tool-call cancels the call on the MCP server (stdio and HTTP)", async () => {
  const s = await setup();
  try {
    for (const [agent, p] of [["Stdio", "__"], ["Web", "__h_"]] as const) {
      s.model.script({ calls: [{ name: `${p}slow`, args: { tag: agent } }] });
      const started = await s.h.service.start({ agent, environment: "default", task: "wait" });
      const ledger = s.h.service.ledger;
      await until(
        () => ledger.toolCalls(started.run.id).some((c) => c.status === "running"),
        "the call started",
      );
      // The request is on its way to the server; give it a moment to arrive before the cancel.
      await new Promise((r) => setTimeout(r, 300));
      s.h.service.cancel(started.run.id, "user pressed stop");
      const ended = await started.done;
      assertEquals([ended.status, ended.finish_reason], ["canceled", "canceled"]);
      assertEquals(s.model.requests.length, agent === "Stdio" ? 1 : 2, "no model call after the cancel");
    }
    // Each server saw its call cancelled: the stdio child wrote it to its log, the HTTP server counted it.
    await until(async () => (await readOr(s.cancelLog)).includes("cancelled slow Stdio"), "stdio cancel");
    await until(() => s.http.cancelled() === 1, "HTTP cancel");
  } finally {
    await s.close();
  }
});

async function readOr(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return "";
  }
}

/** Waits (at most 10 s) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
