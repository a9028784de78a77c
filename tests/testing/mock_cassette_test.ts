import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { join } from "node:path";
import { STN_RUN_ARGS } from "../../scripts/stn_flags.ts";
import { syncMcpServers } from "../../src/mcp/mod.ts";
import { readCassette, writeCassette } from "../../src/testing/cassette.ts";
import { CaseTools } from "../../src/testing/mocks.ts";
import { CassetteRecorder, recordingSecrets } from "../../src/testing/record.ts";
import { CassetteReplay } from "../../src/testing/replay.ts";
import { agentDef, agentHarness } from "../helpers/agents.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { childEnv, MAIN } from "../helpers/stn.ts";
import { toolJson } from "../mcp/helpers.ts";

const WEATHER = `---
model: openai/test-model
tools: ["__echo", "__env"]
max_steps: 4
---
{{role "system"}}
You are a careful weather assistant.
{{role "user"}}
{{userInput}}
`;

/** Syncs one MCP server (`entry`) into a fresh agent harness's catalogue and returns the harness. */
async function harnessWith(modelUrl: string, dir: string, entry: unknown) {
  const h = await agentHarness(modelUrl, [agentDef("Weather", WEATHER, { tools: ["__echo", "__env"] })]);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "servers.json"), JSON.stringify({ mcpServers: { local: entry } }));
  const report = await syncMcpServers(h.db, { environment: "default", directory: dir }, {
    trust: true,
    timeoutMs: 30_000,
  });
  assertEquals(report.servers.map((s) => s.status), ["ok"], JSON.stringify(report));
  return h;
}

Deno.test("stn mock --from-cassette: serves the MCP tools a recording saw; a strict replay against it matches the recording", async () => {
  const model = startModelServer();
  const dir = await Deno.makeTempDir({ prefix: "stn-mock-cassette-" });
  const file = join(dir, "weather.cassette.yaml");
  try {
    // Record a run against the real test MCP server (echo, env) and the scripted model server.
    const live = await harnessWith(model.url, join(dir, "live"), stdioServerEntry());
    try {
      model.script({ calls: [{ name: "__echo", args: { text: "Oslo" } }] }, { text: "Sunny in Oslo" });
      const recorder = new CassetteRecorder(
        { agent: "Weather", environment: "default" },
        await recordingSecrets("sk-test", {}, dir),
      );
      const run = await live.service.run({
        agent: "Weather",
        environment: "default",
        task: "weather in Oslo?",
        doubles: { record: recorder },
      });
      assertEquals(run.status, "completed");
      await writeCassette(file, recorder.cassette());
    } finally {
      await live.close();
    }
    await model.close();

    // An MCP client sees the recorded tools under their own names, answering as recorded.
    const client = new Client({ name: "stn-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [...STN_RUN_ARGS, MAIN, "mock", "--from-cassette", file],
        env: childEnv({ NO_COLOR: "1" }),
        stderr: "inherit",
      }),
    );
    try {
      const { tools } = await client.listTools();
      assertEquals(tools.map((t: { name: string }) => t.name).sort(), ["echo", "env"]);
      const echo = await client.callTool({ name: "echo", arguments: { text: "Oslo" } });
      assertEquals(echo.content, [{ type: "text", text: JSON.stringify({ text: "Oslo" }) }]);
      const env = await client.callTool({ name: "env", arguments: { name: "HOME" } });
      assertEquals(env.isError, true);
      assert(toolJson(env as any).error.message.includes("no recorded call of env"));
    } finally {
      await client.close();
    }

    // The same agent with `stn mock --from-cassette` as its MCP server: the tool list the model is offered and the
    // tool result it reads equal the recording's, so a strict replay (no model server, live tools) passes.
    const mocked = await harnessWith(
      "http://127.0.0.1:9/unused",
      join(dir, "mocked"),
      { command: Deno.execPath(), args: [...STN_RUN_ARGS, MAIN, "mock", "--from-cassette", file] },
    );
    try {
      const player = new CassetteReplay(await readCassette(file), {
        where: file,
        match: "strict",
        ai: { provider: "openai", model: "openai/test-model" },
      });
      const again = await mocked.service.run({
        agent: "Weather",
        environment: "default",
        task: "weather in Oslo?",
        doubles: { models: player.models, tools: new CaseTools({ live: true }) },
      });
      assertEquals(
        [again.status, again.response],
        ["completed", "Sunny in Oslo"],
        JSON.stringify(again.error),
      );
      assertEquals(mocked.service.ledger.toolCalls(again.id).map((c) => [c.name, c.output]), [[
        "__echo",
        JSON.stringify({ text: "Oslo" }),
      ]]);
    } finally {
      await mocked.close();
    }
  } finally {
    await model.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
