import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { dirname } from "node:path";
import { z } from "zod";
import { loadConfig } from "../../src/config/load.ts";
import { announce } from "../../src/deploy/host.ts";
import { readServerFile } from "../../src/config/server_file.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { connectHttp } from "./helpers.ts";

const TOKEN = "mcp-cli-token-0123456789abcdef";

// Each client's config file, as its documentation writes it (strict: a field it does not know fails).
const Strings = z.record(z.string(), z.string());
const Command = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: Strings.optional(),
});
const Typed = <T extends string>(type: T) =>
  z.strictObject({ type: z.literal(type), url: z.url(), headers: Strings.optional() });
/** Claude Desktop's claude_desktop_config.json: commands only (an HTTP server through a bridge command). */
const ClaudeDesktop = z.strictObject({ mcpServers: z.record(z.string(), Command) });
/** Claude Code's .mcp.json: `type: "http"` with url and headers, or `type: "stdio"` with a command. */
const ClaudeCode = z.strictObject({
  mcpServers: z.record(z.string(), z.union([Typed("http"), Command.extend({ type: z.literal("stdio") })])),
});
/** Cursor's mcp.json: `url` and `headers`, or a command. */
const Cursor = z.strictObject({
  mcpServers: z.record(
    z.string(),
    z.union([z.strictObject({ url: z.url(), headers: Strings.optional() }), Command]),
  ),
});
/** VS Code's .vscode/mcp.json: `servers`, each with its `type`. */
const VsCode = z.strictObject({
  servers: z.record(z.string(), z.union([Typed("http"), Command.extend({ type: z.literal("stdio") })])),
});
/** Windsurf's mcp_config.json: `serverUrl` (not `url`) and `headers`, or a command. */
const Windsurf = z.strictObject({
  mcpServers: z.record(
    z.string(),
    z.union([z.strictObject({ serverUrl: z.url(), headers: Strings.optional() }), Command]),
  ),
});

/** A PATH with deno but no `stn`, as a desktop client's often is. */
const PATH_WITHOUT_STN = `${dirname(Deno.execPath())}:/usr/bin:/bin`;

Deno.test("mcp: stn mcp config emits each client's exact shape with the real ports and token; clients connect unedited", async (t) => {
  const home = await tempHome();
  home.writeConfig(`server:\n  api_token: ${TOKEN}\n  mcp_auth: always\n`);
  const serve = await startServe({ home: home.home, env: home.env });
  const env = { ...home.env, PATH: PATH_WITHOUT_STN };
  const config = async (...args: string[]) => {
    const r = await runStn(["mcp", "config", ...args], { env });
    assertEquals(r.code, 0, r.stderr);
    return { json: JSON.parse(r.stdout), stderr: r.stderr };
  };
  try {
    await t.step(
      "HTTP clients: the server's own (free) ports, the Authorization header; tools/list works",
      async () => {
        const cursor = Cursor.parse((await config("--client", "cursor")).json).mcpServers.stn;
        assert("url" in cursor);
        assertEquals(cursor.headers, { Authorization: `Bearer ${TOKEN}` });
        assert(
          !cursor.url.endsWith(":8586/mcp"),
          `the running server's port, not the default: ${cursor.url}`,
        );
        const vscode =
          VsCode.parse((await config("--client", "vscode", "--agent")).json).servers["stn-agents"];
        const code = ClaudeCode.parse((await config("--client", "claude-code")).json).mcpServers.stn;
        const windsurf = Windsurf.parse((await config("--client", "windsurf")).json).mcpServers.stn;
        assert("serverUrl" in windsurf && "url" in vscode && "url" in code);
        for (
          const [url, headers, tool] of [
            [cursor.url, cursor.headers, "list_workflows"],
            [vscode.url, vscode.headers, "get_run_status"],
            [code.url, code.headers, "list_workflows"],
            [windsurf.serverUrl, windsurf.headers, "list_workflows"],
          ] as const
        ) {
          const client = await connectHttp(url, headers);
          const names = (await client.listTools()).tools.map((x: { name: string }) => x.name);
          assert(names.includes(tool), `${url}: ${names}`);
          await client.close();
        }
      },
    );

    await t.step("Claude Desktop over HTTP is the mcp-remote bridge, its token in env", async () => {
      const bridge = ClaudeDesktop.parse((await config("--client", "claude", "--http")).json).mcpServers.stn;
      assertEquals(bridge.command, "npx");
      assertEquals(bridge.args?.slice(0, 2), ["-y", "mcp-remote"]);
      assertEquals(bridge.args?.slice(3), ["--header", "Authorization:${AUTH}"]);
      assertEquals(bridge.env, { AUTH: `Bearer ${TOKEN}` });
    });

    await t.step(
      "Claude Desktop over stdio: stn not on PATH is warned about; the emitted command lists tools",
      async () => {
        const { json, stderr } = await config("--client", "claude");
        const entry = ClaudeDesktop.parse(json).mcpServers.stn;
        assertStringIncludes(stderr, "warning: stn is not on PATH");
        assert(entry.command.startsWith("/"), `an absolute path: ${entry.command}`);
        assertEquals(entry.env, { STATION_HOME: home.home });
        const client = new Client({ name: "stn-test", version: "1.0.0" });
        // As a desktop client launches it: the entry's command, args and env, over the client's short PATH.
        await client.connect(
          new StdioClientTransport({
            command: entry.command,
            args: entry.args,
            env: { ...entry.env, PATH: PATH_WITHOUT_STN },
            stderr: "ignore",
          }),
        );
        try {
          const names = (await client.listTools()).tools.map((x: { name: string }) => x.name);
          assert(names.includes("list_workflows"), String(names));
        } finally {
          await client.close();
        }
      },
    );
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});

Deno.test("mcp: the server.json `stn up` writes carries its MCP URLs and says they want the token", async () => {
  const home = await tempHome();
  try {
    const paths = loadConfig({ env: home.env }).paths;
    announce(paths, {
      url: "http://127.0.0.1:18940",
      mcpUrl: "http://127.0.0.1:18941/mcp",
      agentMcpUrl: "http://127.0.0.1:18942/mcp",
      pid: 1,
      container: "stn-x",
      tokenFile: home.path("up", "x.token"),
    });
    const file = readServerFile(paths.serverJson)!;
    assertEquals([file.mcp_url, file.agent_mcp_url, file.mcp_auth], [
      "http://127.0.0.1:18941/mcp",
      "http://127.0.0.1:18942/mcp",
      true,
    ]);
  } finally {
    await home.cleanup();
  }
});
