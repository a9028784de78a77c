/** `stn mcp stdio` and `stn mcp config`: the management tools over stdio, and client config snippets. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { usageError } from "../errors.ts";
import { approveMcpServers } from "../client/environments.ts";
import { commandConfig, globals, jsonMode, withStation } from "./context.ts";
import { clientConfig, MCP_CLIENTS, mcpAddress, type McpClientName, stdioLaunch } from "./mcp_config.ts";
import { approvalLines } from "./mcp_sync.ts";
import { note, render } from "./output.ts";

/** `stn mcp stdio`, `stn mcp config` and `stn mcp approve`. */
export function mcpCommand(program: Command): void {
  const mcp = program.command("mcp").description(
    "connect MCP clients (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf) to stn",
  );

  mcp.command("stdio")
    .description(
      "serve the management tools over stdin/stdout, for clients that launch a command " +
        "(uses the running server, else an embedded runtime for as long as the client stays)",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      // The MCP server (its SDK and the in-process API) loads only for this command.
      const { serveStdio } = await lazyImport<typeof import("../mcp/server/mod.ts")>(
        "../mcp/server/mod.ts",
        import.meta.url,
      );
      await withStation(cmd, (client) => serveStdio(client));
    });

  mcp.command("approve <server>")
    .description(
      "approve an MCP server of an environment as its config writes it now (command, args, env, url, " +
        "headers), so sync, agents and workflows may start it; a later change needs approving again",
    )
    .option("--env <name>", "the environment (default: workflows.environment from config)")
    .action(async (server: string, opts: { env?: string }, cmd: Command) => {
      const environment = opts.env ?? (await commandConfig(cmd)).values.workflows.environment;
      const r = await withStation(cmd, (client) => approveMcpServers(client, environment, server), {
        embeddedFlags: { "workflows.sync_on_start": false },
      });
      render(r, { json: jsonMode(cmd), text: approvalLines });
    });

  mcp.command("config")
    .description("print the MCP config file a client needs to reach this station (the real ports and token)")
    .option("--client <name>", MCP_CLIENTS.join(", ") + " (claude is Claude Desktop)", "claude")
    .option("--stdio", "launch `stn mcp stdio` instead of connecting to the server's URL (claude's default)")
    .option("--http", "connect to the server's URL (the default for every client but claude)")
    .option(
      "--agent",
      "the agent server (agents and workflows as tools) instead of the management one",
    )
    .addHelpText(
      "after",
      "\nThe address is the station the CLI talks to (--station, STATION_URL, or the server.json of" +
        "\n`stn serve` / `stn up`), with its token as an Authorization header when its MCP port wants" +
        "\none. Claude Desktop's config takes only commands: --http gives it the `npx mcp-remote` bridge." +
        "\nWarnings (no station running, stn not on PATH) go to stderr; stdout is the config alone.",
    )
    .action(
      async (opts: { client: string; stdio?: boolean; http?: boolean; agent?: boolean }, cmd: Command) => {
        if (!(MCP_CLIENTS as readonly string[]).includes(opts.client)) {
          throw usageError(
            "invalid_usage",
            `unknown client ${JSON.stringify(opts.client)}`,
            `use ${MCP_CLIENTS.join(", ")}`,
          );
        }
        const client = opts.client as McpClientName;
        if (opts.stdio && (opts.http || opts.agent)) {
          throw usageError(
            "invalid_usage",
            opts.agent ? "the agent server has no stdio mode" : "--stdio and --http exclude each other",
            opts.agent ? "the agent server is reached over HTTP: drop --stdio" : "give one of them",
          );
        }
        const stdio = opts.stdio || (client === "claude" && !opts.http && !opts.agent);
        const config = await commandConfig(cmd);
        const station = globals(cmd).station;
        const warn = (message: string) => note((s) => `${s.yellow("warning:")} ${message}`);
        const how = stdio
          ? { stdio: stdioLaunch(config, { station }, warn) }
          : { http: await mcpAddress(config, { station, agent: opts.agent }, warn) };
        const name = opts.agent ? "stn-agents" : "stn";
        console.log(JSON.stringify(clientConfig(client, name, how), null, 2));
      },
    );
}
