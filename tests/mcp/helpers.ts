import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig } from "../../src/config/load.ts";
import { setLogLevel } from "../../src/log.ts";
import { startStation, type Station } from "../../src/runtime/station.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";

/** A station with its MCP servers on free ports. */
export interface McpStation {
  station: Station;
  home: TempHome;
  /** The management server's /mcp URL. */
  mcpUrl: string;
  /** The agent server's /mcp URL. */
  agentUrl: string;
  close(): Promise<void>;
}

/** Starts a real station (nats-server, SQLite, HTTP) listening on its API and both MCP ports. */
export async function startMcpStation(
  options: { configYaml?: string; env?: Record<string, string>; home?: TempHome } = {},
): Promise<McpStation> {
  setLogLevel("warn");
  const home = options.home ?? await tempHome();
  if (options.configYaml) home.writeConfig(options.configYaml);
  const config = loadConfig({
    env: { ...home.env, ...options.env },
    flags: { "server.port": 0, "server.mcp_port": 0, "server.agent_port": 0 },
  });
  const station = await startStation(config, { announce: false, mcp: true });
  return {
    station,
    home,
    mcpUrl: station.mcp!.url,
    agentUrl: station.mcp!.agentUrl,
    close: async () => {
      await station.stop();
      if (!options.home) await home.cleanup();
    },
  };
}

/** A connected official SDK client over Streamable HTTP. */
// deno-lint-ignore no-explicit-any -- the SDK client types as any through its .js subpath; tests call it freely
export async function connectHttp(url: string, headers: Record<string, string> = {}): Promise<any> {
  const client = new Client({ name: "stn-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The parsed JSON of a tool result's text (the API's answer, or its error body). */
// deno-lint-ignore no-explicit-any -- a tool's JSON answer, which tests read field by field
export function toolJson(result: { content: { type: string; text: string }[] }): any {
  return JSON.parse(result.content[0].text);
}

/** Polls `read` until `done` holds (every 50 ms, up to 20 s). */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
