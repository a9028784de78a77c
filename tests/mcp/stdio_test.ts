import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";
import { childEnv, MAIN } from "../helpers/stn.ts";
import { call, exerciseManagement } from "./scenario.ts";

/** The official SDK client running `stn mcp stdio` as a client application launches it. */
// deno-lint-ignore no-explicit-any -- the SDK client types as any through its .js subpath; tests call it freely
async function connectStdio(env: Record<string, string>): Promise<any> {
  const client = new Client({ name: "stn-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: [...STN_RUN_ARGS, MAIN, "mcp", "stdio"],
      env: childEnv(env),
      stderr: "inherit",
    }),
  );
  return client;
}

Deno.test("mcp: stn mcp stdio with no server running serves the tools from an embedded runtime", async () => {
  const home = await tempHome();
  const client = await connectStdio(home.env);
  try {
    await exerciseManagement(client, "stdio");
  } finally {
    await client.close();
    await home.cleanup();
  }
});

Deno.test("mcp: stn mcp stdio uses the running server it finds", async () => {
  const s = await startTestStation();
  const client = await connectStdio({ ...s.home.env, STATION_URL: s.station.url });
  try {
    await s.client.json("POST", "/api/v1/workflows", {
      body: { id: "on-server", states: [{ id: "a", type: "inject", data: {} }] },
    });
    const { workflows } = await call(client, "list_workflows", {});
    assertEquals(workflows.map((w: { id: string }) => w.id), ["on-server"]);
  } finally {
    await client.close();
    await s.close();
  }
});
