import { assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { connectHttp } from "./helpers.ts";

const TOKEN = "mcp-cli-token-0123456789abcdef";

Deno.test("mcp: stn serve listens on both MCP ports, and stn mcp config prints what a client needs to reach them", async () => {
  const home = await tempHome();
  home.writeConfig(`server:\n  api_token: ${TOKEN}\n  mcp_auth: always\n`);
  const serve = await startServe({ home: home.home, env: home.env });
  try {
    const config = async (...args: string[]) => {
      const r = await runStn(["mcp", "config", ...args], { env: home.env });
      assertEquals(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    // The running server's own addresses (it listens on free ports here), with the token it requires.
    const cursor = (await config("--client", "cursor")).mcpServers.stn;
    assertEquals(cursor.headers, { Authorization: `Bearer ${TOKEN}` });
    const management = await connectHttp(cursor.url, cursor.headers);
    assertEquals((await management.listResources()).resources.length, 4);
    await management.close();

    const vscode = (await config("--client", "vscode", "--agent")).servers["stn-agents"];
    assertEquals(vscode.type, "http");
    const agents = await connectHttp(vscode.url, vscode.headers);
    assertEquals((await agents.listTools()).tools.map((t: { name: string }) => t.name), ["get_run_status"]);
    await agents.close();

    assertEquals((await config("--client", "claude")).mcpServers.stn, {
      command: "stn",
      args: ["mcp", "stdio"],
      env: { STATION_HOME: home.home },
    });
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
