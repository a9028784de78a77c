import { onAgentsChange } from "../../agents/changes.ts";
import { StationClient } from "../../client/http.ts";
import { StationError } from "../../errors.ts";
import { listen, type Listener } from "../../api/listen.ts";
import type { StationContext } from "../../runtime/context.ts";
import { agentCatalog, watchTools } from "./agent.ts";
import { mcpApp } from "./http.ts";
import { managementCatalog } from "./management.ts";
import { type McpCatalog, serverFor } from "./server.ts";
import { McpSessions } from "./sessions.ts";

/** The MCP servers' one public module: the station starts them, the CLI serves stdio, docs list the tools. */
export { managementTools } from "./management.ts";
export { serveCatalogStdio, serveStdio } from "./stdio.ts";
export type { McpCatalog } from "./server.ts";
export { mcpToken } from "./token.ts";

/** The two MCP endpoints of a running station. */
export interface McpServers {
  /** http://host:port/mcp of the management server. */
  mcpUrl: string;
  /** http://host:port/mcp of the agent server. */
  agentUrl: string;
  close(): Promise<void>;
}

/**
 * A client of the API that calls the app in-process (no socket), with the token the app may require.
 * A network fetch's body fails when its signal aborts, ending the server's stream; the app's own answer
 * does not, so an event stream is piped through the signal: a wait that runs out stops following (the
 * SSE route sees the cancel) instead of reading until the run ends.
 */
export function inProcessClient(
  api: (req: Request) => Response | Promise<Response>,
  token?: string,
): StationClient {
  return new StationClient("http://stn.internal", {
    token,
    fetch: async (input, init) => {
      const res = await api(new Request(input, init));
      const signal = init?.signal;
      if (!signal || !res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
        return res;
      }
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      res.body.pipeTo(writable, { signal }).catch(() => {}); // the reader sees the abort as a failed read
      return new Response(readable, { status: res.status, statusText: res.statusText, headers: res.headers });
    },
  });
}

/** listen(), with a port clash naming the config key of that port. */
async function listenOn(
  fetch: (req: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  key: string,
): Promise<Listener> {
  try {
    return await listen(fetch, host, port);
  } catch (err) {
    if (!(err instanceof StationError) || err.code !== "port_in_use") throw err;
    throw new StationError("port_in_use", err.message, {
      hint:
        `another stn serve may be running (stn status); choose another port with server.${key} (0 = any free port)`,
      exitCode: 1,
    });
  }
}

/**
 * Listens on server.mcp_port (management tools) and server.agent_port (agents and workflows as tools),
 * both Streamable HTTP at /mcp, both thin adapters over the API app.
 */
export async function startMcpServers(
  ctx: StationContext,
  api: (req: Request) => Response | Promise<Response>,
  clientHost: string,
): Promise<McpServers> {
  const server = ctx.config.values.server;
  const client = inProcessClient(api, server.api_token);
  const options = { idleMs: server.mcp_session_idle, maxBodyBytes: server.max_body_bytes };
  const catalog = managementCatalog(client);
  const management = new McpSessions(() => serverFor(catalog), options);
  const environment = ctx.config.values.workflows.environment;
  const agentTools = agentCatalog({ db: ctx.db, environment, workflows: ctx.workflows }, client);
  const agents = new McpSessions(() => serverFor(agentTools), options);
  // A sync that changes workflows or agents tells every session its tool list changed.
  const agentSync = { onChange: (listener: () => void) => onAgentsChange(ctx.db, listener) };
  const unwatch = watchTools(agentTools, [ctx.workflows, agentSync], () => agents.toolsChanged());
  const opened: { listener: Listener; sessions: McpSessions }[] = [];
  try {
    const ports = [["mcp_port", management], ["agent_port", agents]] as const;
    for (const [key, sessions] of ports) {
      opened.push({
        listener: await listenOn(mcpApp(server, sessions).fetch, server.host, server[key], key),
        sessions,
      });
    }
  } catch (err) {
    unwatch();
    for (const o of opened) await o.listener.close();
    throw err;
  }
  const url = (l: Listener) => `http://${clientHost}:${l.port}/mcp`;
  return {
    mcpUrl: url(opened[0].listener),
    agentUrl: url(opened[1].listener),
    close: async () => {
      unwatch();
      for (const { listener, sessions } of opened) {
        await sessions.close();
        await listener.close();
      }
    },
  };
}

/** A catalog served over Streamable HTTP at `url` (http://host:port/mcp) until closed. */
export interface CatalogServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves one catalog over Streamable HTTP at http://host:port/mcp (`stn mock --port`), with the same origin
 * checks and sessions as the station's endpoints; no token (it serves nothing real), so loopback only.
 */
export async function serveCatalogHttp(
  catalog: McpCatalog,
  options: { host: string; port: number; idleMs: number; maxBodyBytes: number },
): Promise<CatalogServer> {
  const sessions = new McpSessions(() => serverFor(catalog), options);
  const app = mcpApp({ host: options.host, mcp_auth: "auto" }, sessions);
  let listener: Listener;
  try {
    listener = await listen(app.fetch, options.host, options.port);
  } catch (err) {
    await sessions.close();
    throw err;
  }
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${listener.port}/mcp`,
    close: async () => {
      await sessions.close();
      await listener.close();
    },
  };
}
