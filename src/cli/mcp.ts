/** `stn mcp stdio` and `stn mcp config`: the management tools over stdio, and client config snippets. */

import type { Command } from "commander";
import { usageError } from "../errors.ts";
import { mcpToken } from "../mcp/server/token.ts";
import { readServerFile } from "../config/server_file.ts";
import { answers } from "../client/discovery.ts";
import { approveMcpServers } from "../client/environments.ts";
import { commandConfig, jsonMode, withStation } from "./context.ts";
import { approvalLines } from "./mcp_sync.ts";
import { render } from "./output.ts";

const CLIENTS = ["claude", "cursor", "vscode"] as const;
type McpClient = typeof CLIENTS[number];

/** An MCP server entry as the clients' config files spell it. */
type Entry = Record<string, unknown>;

/** The entry of one client: an HTTP URL with the token header, or the `stn mcp stdio` command. */
function entry(client: McpClient, target: { url: string; token?: string } | "stdio"): Entry {
  if (target === "stdio") {
    const env = Deno.env.get("STATION_HOME") ? { env: { STATION_HOME: Deno.env.get("STATION_HOME") } } : {};
    return {
      ...(client === "vscode" ? { type: "stdio" } : {}),
      command: "stn",
      args: ["mcp", "stdio"],
      ...env,
    };
  }
  const headers = target.token ? { headers: { Authorization: `Bearer ${target.token}` } } : {};
  return { ...(client === "cursor" ? {} : { type: "http" }), url: target.url, ...headers };
}

/** The whole snippet: VS Code's `.vscode/mcp.json` has `servers`, the others `mcpServers`. */
function snippet(client: McpClient, name: string, e: Entry): Record<string, unknown> {
  return client === "vscode" ? { servers: { [name]: e } } : { mcpServers: { [name]: e } };
}

/** `stn mcp stdio`, `stn mcp config` and `stn mcp approve`. */
export function mcpCommand(program: Command): void {
  const mcp = program.command("mcp").description("connect MCP clients (Claude, Cursor, VS Code) to stn");

  mcp.command("stdio")
    .description(
      "serve the management tools over stdin/stdout, for clients that launch a command " +
        "(uses the running server, else an embedded runtime for as long as the client stays)",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      // The MCP server (its SDK and the in-process API) loads only for this command.
      const { serveStdio } = await import("../mcp/server/mod.ts");
      await withStation(cmd, (client) => serveStdio(client));
    });

  mcp.command("approve <server>")
    .description(
      "approve an MCP server of an environment as its config writes it now (command, args, env, url, " +
        "headers), so sync, agents and workflows may start it; a later change needs approving again",
    )
    .option("--env <name>", "the environment (default: workflows.environment from config)")
    .action(async (server: string, opts: { env?: string }, cmd: Command) => {
      const environment = opts.env ?? commandConfig(cmd).values.workflows.environment;
      const r = await withStation(cmd, (client) => approveMcpServers(client, environment, server), {
        embeddedFlags: { "workflows.sync_on_start": false },
      });
      render(r, { json: jsonMode(cmd), text: approvalLines });
    });

  mcp.command("config")
    .description("print the JSON a client needs to reach stn (add it to the client's MCP config file)")
    .option("--client <name>", "claude, cursor or vscode", "claude")
    .option("--stdio", "launch `stn mcp stdio` instead of connecting to the server's URL (claude's default)")
    .option("--http", "connect to the server's URL (the default for cursor and vscode)")
    .option(
      "--agent",
      "the agent server (:8587: agents and workflows as tools) instead of the management one",
    )
    .action(
      async (opts: { client: string; stdio?: boolean; http?: boolean; agent?: boolean }, cmd: Command) => {
        if (!(CLIENTS as readonly string[]).includes(opts.client)) {
          throw usageError(
            "invalid_usage",
            `unknown client ${JSON.stringify(opts.client)}`,
            `use ${CLIENTS.join(", ")}`,
          );
        }
        const client = opts.client as McpClient;
        if (opts.stdio && (opts.http || opts.agent)) {
          throw usageError(
            "invalid_usage",
            opts.agent ? "the agent server has no stdio mode" : "--stdio and --http exclude each other",
            opts.agent ? "the agent server is reached over HTTP: drop --stdio" : "give one of them",
          );
        }
        const stdio = opts.stdio || (client === "claude" && !opts.http && !opts.agent);
        const config = commandConfig(cmd);
        const server = config.values.server;
        let target: { url: string; token?: string } | "stdio" = "stdio";
        if (!stdio) {
          // A running server's own address wins over what config.yaml says (a --port or env override).
          const running = readServerFile(config.paths.serverJson);
          const live = running && await answers(running.url) ? running : undefined;
          const host = server.host === "0.0.0.0" || server.host === "::" ? "127.0.0.1" : server.host;
          const port = opts.agent ? server.agent_port : server.mcp_port;
          const fallback = `http://${host.includes(":") ? `[${host}]` : host}:${port}/mcp`;
          const url = (opts.agent ? live?.agent_mcp_url : live?.mcp_url) ?? fallback;
          target = { url, token: mcpToken(server) };
        }
        const name = opts.agent ? "stn-agents" : "stn";
        console.log(JSON.stringify(snippet(client, name, entry(client, target)), null, 2));
      },
    );
}
