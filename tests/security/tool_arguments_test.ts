import { join } from "node:path";
import { syncMcpServers } from "../../src/mcp/mod.ts";
import { agentRunView } from "../../src/agents/views.ts";
import { agentDef, agentHarness } from "../helpers/agents.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { startModelServer } from "../helpers/model_server.ts";

/**
 * Issue 27 item 7: a tool call's arguments are checked before the tool runs. Malformed JSON and arguments
 * that break the tool's input schema go back to the model as a tool error and are recorded on the call;
 * the tool (here a REAL stdio MCP server, which logs every `tools/call` it receives) is never called.
 * The model is the scripted local server, the one allowed fake.
 */

const PROMPT = `---
model: openai/test-model
tools: ["__echo", "__env"]
max_steps: 4
---
{{role "system"}}
Use your tools.
{{role "user"}}
{{userInput}}
`;

Deno.test("tool arguments: malformed JSON and a schema violation reach the model as tool errors, never the MCP server", async () => {
  const model = startModelServer();
  const h = await agentHarness(model.url, [agentDef("Tools", PROMPT, { tools: ["__echo", "__env"] })]);
  const dir = await Deno.makeTempDir({ prefix: "stn-tool-args-" });
  const callLog = join(dir, "calls.log");
  try {
    await Deno.writeTextFile(
      join(dir, "servers.json"),
      JSON.stringify({ mcpServers: { local: stdioServerEntry({ env: { MCP_TEST_CALL_LOG: callLog } }) } }),
    );
    const synced = await syncMcpServers(h.db, { environment: "default", directory: dir }, {
      trust: true,
      timeoutMs: 15_000,
    });
    assertEquals(synced.servers.map((s) => s.status), ["ok"]);

    model.script(
      {
        calls: [
          // The case: the JSON text ends inside a string.
          { name: "__echo", args: '{"text": "unterminated' },
          // `env` requires `name`, a string.
          { name: "__env", args: { name: 42 } },
          // A good call in the same turn still runs.
          { name: "__echo", args: { text: "fine" } },
        ],
      },
      { text: "done" },
    );
    const run = await h.service.run({ agent: "Tools", environment: "default", task: "call the tools" });
    assertEquals([run.status, run.response], ["completed", "done"]);

    // The next model request carries one tool result per call: two errors naming the problem, one echo.
    const results = model.requests[1].body.messages.filter((m: { role: string }) => m.role === "tool");
    assertEquals(results.length, 3, JSON.stringify(results));
    const malformed = JSON.parse(results[0].content) as { error: string };
    assertStringIncludes(malformed.error, "not valid JSON");
    const violation = JSON.parse(results[1].content) as { error: string };
    assertStringIncludes(violation.error, "input schema");
    assertStringIncludes(violation.error, "/name");
    assertEquals(JSON.parse(results[2].content), { text: "fine" });

    // Only the good call reached the MCP server: never one with {} or with the wrong type.
    const calls = (await Deno.readTextFile(callLog)).trim().split("\n");
    assertEquals(calls, ['echo {"text":"fine"}']);

    // The ledger records both refusals on their tool calls, as `stn agent inspect` shows them.
    const recorded = h.service.ledger.toolCalls(run.id);
    assertEquals(recorded.map((c) => [c.name, c.status]), [
      ["__echo", "failed"],
      ["__env", "failed"],
      ["__echo", "completed"],
    ]);
    assertEquals(recorded[0].arguments, JSON.stringify('{"text": "unterminated'));
    const view = agentRunView(h.service.ledger, h.service.ledger.get(run.id)!);
    assert(view.tool_calls[0].error?.includes("not valid JSON"), JSON.stringify(view.tool_calls[0]));
    assert(view.tool_calls[1].error?.includes("/name"), JSON.stringify(view.tool_calls[1]));
  } finally {
    await h.close();
    await model.close();
    await Deno.remove(dir, { recursive: true });
  }
});
