/**
 * MCP round trip: a tool call through the management server (`get_workflow_run`, Streamable HTTP, an
 * established session, the official SDK client) against the same operation through the HTTP API
 * (`GET /api/v1/workflow-runs/{id}` with fetch), interleaved, same station, same run. Prints the medians
 * and the ratio.
 *
 *   deno run -A scripts/bench/mcp.ts [calls=300]
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation } from "../../src/runtime/station.ts";

const CALLS = Number(Deno.args[0] ?? 300);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

setLogLevel("warn");
const home = await Deno.makeTempDir({ prefix: "stn-bench-mcp-" });
const config = loadConfig({
  env: { STATION_HOME: home },
  flags: { "server.port": 0, "server.mcp_port": 0, "server.agent_port": 0 },
});
const station = await startStation(config, { announce: false, mcp: true });
const client = new Client({ name: "bench", version: "1" });
try {
  const res = await fetch(`${station.url}/api/v1/workflow-runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      definition: { id: "bench", states: [{ id: "a", type: "inject", data: { x: 1 } }] },
    }),
  });
  const run = await res.json();
  await client.connect(new StreamableHTTPClientTransport(new URL(station.mcp!.url)));

  const api = async () => {
    const r = await fetch(`${station.url}/api/v1/workflow-runs/${run.id}`);
    return await r.json();
  };
  const mcp = async () => {
    const r = await client.callTool({ name: "get_workflow_run", arguments: { runId: run.id } });
    return JSON.parse(r.content[0].text);
  };
  // Same answer both ways, then warm up both paths before timing.
  if ((await api()).id !== (await mcp()).id) throw new Error("the two paths answer different runs");
  for (let i = 0; i < 30; i++) await api(), await mcp();
  const times = { api: [] as number[], mcp: [] as number[] };
  for (let i = 0; i < CALLS; i++) {
    for (const [name, fn] of [["api", api], ["mcp", mcp]] as const) {
      const t0 = performance.now();
      await fn();
      times[name].push(performance.now() - t0);
    }
  }
  const [a, m] = [median(times.api), median(times.mcp)];
  console.log(`HTTP API  GET /api/v1/workflow-runs/{id}: median ${a.toFixed(2)} ms (${CALLS} calls)`);
  console.log(`MCP       tools/call get_workflow_run:      median ${m.toFixed(2)} ms (${CALLS} calls)`);
  console.log(`ratio MCP / HTTP API: ${(m / a).toFixed(2)}x`);
} finally {
  await client.close();
  await station.stop();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
