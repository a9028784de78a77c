import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { EXAMPLE_MCP_SERVER } from "../../src/environment_files/examples.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { MAIN, runStn } from "../helpers/stn.ts";

/**
 * `stn faker` where Station users put it: as the command of a server in an environment's MCP config, in front
 * of the npm filesystem server. `stn sync --trust` discovers the real tools through it; an agent run calls one
 * and gets generated data; the session is recorded in the station home the config points it at.
 */

const systemOf = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");

Deno.test("stn faker as an environment's MCP server: synced, called by an agent, the session recorded", async () => {
  const home = await tempHome();
  const model = startModelServer();
  const root = home.path("files");
  Deno.mkdirSync(root);
  Deno.writeTextFileSync(`${root}/ledger.csv`, "a,b\n");
  home.writeConfig(`ai:\n  base_url: ${model.url}\n  api_key: sk-test\n  model: openai/test-model\n`);
  const env = home.path("environments/default");
  Deno.mkdirSync(`${env}/mcp-configs`, { recursive: true });
  Deno.mkdirSync(`${env}/agents`);
  const realArgs = ["run", "--no-config", "--allow-env", `--allow-read=${root}`, EXAMPLE_MCP_SERVER, root];
  Deno.writeTextFileSync(
    `${env}/mcp-configs/files.json`,
    JSON.stringify({
      mcpServers: {
        files: {
          command: Deno.execPath(),
          args: [
            ...STN_RUN_ARGS,
            MAIN,
            "faker",
            "--command",
            Deno.execPath(),
            "--args",
            realArgs.join(","),
            "--ai-enabled",
          ],
          env: { STATION_HOME: home.home },
        },
      },
    }),
  );
  Deno.writeTextFileSync(
    `${env}/agents/Reader.prompt`,
    '---\ntools: ["__list_directory"]\nmax_steps: 3\n---\nYou list folders.\n{{userInput}}\n',
  );
  const generated = "[FILE] payroll-2031.xlsx\n[DIR] archive";
  model.route((r) => {
    if (systemOf(r).startsWith("You write realistic data")) {
      return { text: JSON.stringify({ content: generated }) };
    }
    const tools = r.body.messages.filter((m: { role: string }) => m.role === "tool");
    return tools.length === 0
      ? { calls: [{ name: "__list_directory", args: { path: root } }] }
      : { text: `I see: ${tools[0].content}` };
  });
  try {
    const sync = await runStn(["sync", "--trust"], { env: home.env, timeoutMs: 180_000 });
    assertEquals(sync.code, 0, sync.stderr);
    assert(sync.stdout.includes("mcp server files (stdio): 14 tool(s)"), sync.stdout);
    const none = await runStn(["--json", "faker", "sessions", "list"], { env: home.env });
    assertEquals(JSON.parse(none.stdout).sessions, [], "discovering the tools records no session");

    const run = await runStn(["--json", "agent", "run", "Reader", "what is in the folder?"], {
      env: home.env,
      timeoutMs: 180_000,
    });
    assertEquals(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert(JSON.stringify(out).includes("payroll-2031.xlsx"), run.stdout);
    assert(!JSON.stringify(out).includes("ledger.csv"), "the agent never saw the real folder");

    const { sessions } = JSON.parse(
      (await runStn(["--json", "faker", "sessions", "list"], { env: home.env })).stdout,
    );
    assertEquals(sessions.length, 1);
    const session = JSON.parse(
      (await runStn(["--json", "faker", "sessions", "view", sessions[0].id], { env: home.env })).stdout,
    );
    assertEquals(session.calls.length, 1);
    assertEquals(session.calls[0].source, "generated");
    assertEquals(session.calls[0].answer.structured_content, { content: generated });
    assert(
      String(session.calls[0].real.content[0].text).includes("ledger.csv"),
      "the real answer is recorded",
    );
  } finally {
    await model.close();
    await home.cleanup();
  }
});
