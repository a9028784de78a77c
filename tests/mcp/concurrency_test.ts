import { assertEquals } from "../helpers/assert.ts";
import { connectHttp, startMcpStation, toolJson } from "./helpers.ts";
import { call } from "./scenario.ts";

const SESSIONS = 50;
const SECONDS = 10;

Deno.test(`mcp: ${SESSIONS} concurrent sessions calling tools for ${SECONDS} s: no error, no crosstalk`, async () => {
  const s = await startMcpStation();
  const clients = await Promise.all(Array.from({ length: SESSIONS }, () => connectHttp(s.mcpUrl)));
  try {
    const ids = new Set(clients.map((c) => c.transport.sessionId));
    assertEquals(ids.size, SESSIONS, "each client has its own session");
    const deadline = Date.now() + SECONDS * 1000;
    const counts = await Promise.all(clients.map(async (client, i) => {
      // Each session's own run and file, read back at the end: answers must be this session's.
      const run = await call(client, "start_workflow_run", {
        definition: { id: `mcp-c${i}`, states: [{ id: "a", type: "inject", data: { session: i } }] },
        input: { session: i },
      });
      const file = await call(client, "upload_file", { content: `session ${i}` });
      let calls = 2;
      for (let n = 0; Date.now() < deadline; n++) {
        const id = `s${i}-${n}`;
        const report = await call(client, "validate_workflow", {
          definition: { id, states: [{ id: "x", type: "inject", data: { n } }] },
        });
        assertEquals([report.valid, report.definition.id], [true, id]);
        const own = await call(client, "get_workflow_run", { runId: run.id });
        assertEquals(own.input, { session: i });
        calls += 2;
      }
      assertEquals((await call(client, "download_file", { key: file.file_key })).content, `session ${i}`);
      const bad = await client.callTool({ name: "get_workflow_run", arguments: { runId: `none-${i}` } });
      assertEquals(toolJson(bad).error.message, `no workflow run none-${i}`);
      return calls + 2;
    }));
    const total = counts.reduce((a, b) => a + b, 0);
    console.log(
      `${SESSIONS} sessions made ${total} tool calls in ${SECONDS} s (${Math.round(total / SECONDS)}/s)`,
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await s.close();
  }
});
