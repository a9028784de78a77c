import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn } from "../helpers/stn.ts";
import { writeEnvironment } from "../helpers/test_env.ts";

const PROMPT = (word: string) =>
  `---\nmodel: openai/test-model\ntools: ["__echo", "__env"]\n---\n{{role "system"}}\nYou are a ${word} helper.\n` +
  `{{role "user"}}\n{{userInput}}\n`;

/** The scripted model: it echoes the task's last word through __echo, then answers with the tool's result. */
function echoTheTask(r: ModelRequest) {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const tool = messages.find((m) => m.role === "tool");
  if (tool) return { text: `done: ${JSON.stringify(tool.content)}` };
  const task = String(messages.at(-1)?.content ?? "");
  return { calls: [{ name: "__echo", args: { text: task.split(" ").at(-1) } }] };
}

const SUITE = `cases:
  - name: recorded
    agent: helper
    task: weather in Oslo
    model: { cassette: cassettes/helper.yaml }
    expect:
      output: '$contains($, "Oslo")'
      tool_calls: [{ name: __echo, args: 'text = "Oslo"', count: 1 }]
  - name: mocked tool sees the arguments
    agent: helper
    task: weather in Bergen
    mocks:
      __echo: { expr: '"mocked " & $args.text' }
    expect:
      output: '$contains($, "mocked Bergen")'
`;

const UNMOCKED = `cases:
  - name: calls a tool nobody mocked
    agent: helper
    task: anything
    model:
      script:
        - tool_calls: [{ name: __env, args: { name: HOME } }]
        - text: never reached
`;

Deno.test("stn test with agents: --update records a cassette, it replays offline, prompt drift fails with a diff, mocks see args, unmocked tools fail", async () => {
  const model = startModelServer();
  model.route(echoTheTask);
  const home = await tempHome();
  try {
    const envDir = await writeEnvironment(home.home, {
      "agents/helper.prompt": PROMPT("careful"),
      "mcp-configs/servers.json": JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
      "tests/helper.test.yaml": SUITE,
      "tests/unmocked.test.yaml": UNMOCKED,
    });
    home.writeConfig(`ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`);
    // The user's station knows the MCP server's tools (and that it is approved): stn test offers them.
    const sync = await runStn(["sync", "--trust"], { env: home.env });
    assertEquals(sync.code, 0, sync.stderr);

    const first = await runStn(["test", "--update", "tests/helper.test.yaml"], {
      env: home.env,
      cwd: envDir,
    });
    assertEquals(first.code, 0, first.stdout + first.stderr);
    assertStringIncludes(first.stdout, "✓ tests/helper.test.yaml › recorded");
    assertStringIncludes(first.stdout, "cassette re-recorded");
    const cassette = await Deno.readTextFile(join(envDir, "tests", "cassettes", "helper.yaml"));
    assertStringIncludes(cassette, "You are a careful helper.");
    assert(!cassette.includes("sk-test"), "the API key is masked");

    // Offline: no model server answers, the cassette does.
    const offline = { ...home.env, STN_AI_BASE_URL: "http://127.0.0.1:9/v1" };
    const replay = await runStn(["--json", "test", "--filter", "recorded"], { env: offline });
    assertEquals(replay.code, 0, replay.stdout + replay.stderr);
    const requests = model.requests.length;

    // One word of the prompt changed: the case fails naming the changed line.
    await Deno.writeTextFile(join(envDir, "agents", "helper.prompt"), PROMPT("cheerful"));
    const drift = await runStn(["test", "--filter", "recorded"], { env: offline });
    assertEquals(drift.code, 1, drift.stdout + drift.stderr);
    assertStringIncludes(drift.stdout, "✗ tests/helper.test.yaml › recorded");
    assertStringIncludes(drift.stdout, "You are a careful helper.");
    assertStringIncludes(drift.stdout, "You are a cheerful helper.");
    assertEquals(model.requests.length, requests, "a replay never calls the model");

    // --update against the scripted model re-records it, and it passes again.
    const update = await runStn(["test", "--update", "--filter", "recorded"], { env: home.env });
    assertEquals(update.code, 0, update.stdout + update.stderr);
    assertStringIncludes(
      await Deno.readTextFile(join(envDir, "tests", "cassettes", "helper.yaml")),
      "cheerful",
    );

    // A tool call nothing mocks fails the case, naming the tool.
    const unmocked = await runStn(["test", "--filter", "nobody mocked"], { env: offline });
    assertEquals(unmocked.code, 1, unmocked.stdout + unmocked.stderr);
    assertStringIncludes(unmocked.stdout, "✗ tests/unmocked.test.yaml › calls a tool nobody mocked");
    assertStringIncludes(unmocked.stdout, "__env");
    assertStringIncludes(unmocked.stdout, "tool_not_mocked");
  } finally {
    await home.cleanup();
    await model.close();
  }
});
