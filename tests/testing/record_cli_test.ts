import { join } from "node:path";
import { StationClient } from "../../src/client/http.ts";
import { readCassette } from "../../src/testing/cassette.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe } from "../helpers/stn.ts";

/**
 * `--record FILE` through the real `stn` binary: embedded mode, and against `stn serve` (the API's `record`
 * field and cassette routes), with the real stdio MCP test server and the scripted model server.
 */

const SECRET = "tok-9f2e-weather-secret";

async function homeWithWeather(modelUrl: string) {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${modelUrl}\n  api_key: sk-test-cli-key\nsandbox:\n  enabled: false\n`,
  );
  const env = home.path("environments", "default");
  await Deno.mkdir(join(env, "agents"), { recursive: true });
  await Deno.mkdir(join(env, "mcp-configs"), { recursive: true });
  await Deno.writeTextFile(join(env, "variables.yml"), `WEATHER_API_TOKEN: ${SECRET}\n`);
  await Deno.writeTextFile(
    join(env, "mcp-configs", "servers.json"),
    JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
  );
  await Deno.writeTextFile(
    join(env, "agents", "Weather.prompt"),
    `---\nmodel: openai/test-model\ntools: ["__echo"]\nmax_steps: 3\n---\n{{role "system"}}\nYou report the weather.\n{{role "user"}}\n{{userInput}}\n`,
  );
  const sync = await runStn(["sync", "--trust"], { env: home.env });
  assertEquals(sync.code, 0, sync.stderr);
  return home;
}

Deno.test("stn agent run --record (embedded): the cassette holds the model and tool calls, secrets masked; a non-cassette file is refused", async () => {
  const model = startModelServer();
  const home = await homeWithWeather(model.url);
  try {
    model.script({ calls: [{ name: "__echo", args: { text: "Oslo" } }] }, { text: "Sunny" });
    const file = home.path("weather.cassette.yaml");
    const run = await runStn(
      ["agent", "run", "Weather", `weather in Oslo, token ${SECRET}`, "--record", file],
      { env: home.env },
    );
    assertEquals(run.code, 0, run.stderr);
    assertEquals(run.stdout.trim(), "Sunny");
    assertStringIncludes(run.stderr, `recorded 1 agent run to ${file}`);
    const text = await Deno.readTextFile(file);
    assert(!text.includes(SECRET) && !text.includes("sk-test-cli-key"), text);
    const cassette = await readCassette(file);
    assertEquals(cassette.recorded, { agent: "Weather", environment: "default" });
    assertEquals(
      cassette.runs[0].events.map((e) => "model" in e ? "model" : `tool ${e.tool.name}`),
      ["model", "tool __echo", "model"],
    );

    // A file stn did not write is never overwritten, and nothing runs.
    const mine = home.path("notes.txt");
    await Deno.writeTextFile(mine, "my notes\n");
    const refused = await runStn(["agent", "run", "Weather", "x", "--record", mine], { env: home.env });
    assertEquals(refused.code, 2, refused.stderr);
    assertStringIncludes(refused.stderr, "the file exists and is not a cassette");
    assertEquals(await Deno.readTextFile(mine), "my notes\n");
    assertEquals(model.requests.length, 2);
  } finally {
    await home.cleanup();
    await model.close();
  }
});

Deno.test("stn workflow run --record against stn serve: every agent step's run, keyed by step; the cassette routes", async () => {
  const model = startModelServer();
  const home = await homeWithWeather(model.url);
  const serve = await startServe({ env: home.env, home: home.home });
  try {
    model.route((r) => {
      const last = r.body.messages.at(-1);
      return last.role === "tool" ? { text: "done" } : { calls: [{ name: "__echo", args: { text: "x" } }] };
    });
    const wf = home.path("two.workflow.yaml");
    await Deno.writeTextFile(
      wf,
      "id: two\nstates:\n  - id: first\n    type: agent\n    agent: Weather\n    task: Oslo\n    next: second\n" +
        "  - id: second\n    type: agent\n    agent: Weather\n    task: Bergen\n",
    );
    const file = home.path("two.cassette.yaml");
    const run = await runStn(["workflow", "run", wf, "--record", file], { env: home.env });
    assertEquals(run.code, 0, run.stderr);
    const cassette = await readCassette(file);
    assertEquals(cassette.recorded, { workflow: "two" });
    assertEquals(cassette.runs.map((r) => r.key), ["step:first#1:Weather", "step:second#1:Weather"]);
    for (const r of cassette.runs) assertEquals(r.events.length, 3);

    // A run started without `record` has no cassette.
    const client = new StationClient(serve.url);
    const plain = await runStn(["agent", "run", "Weather", "x", "--json"], { env: home.env });
    const id = JSON.parse(plain.stdout).run_id;
    const missing = await client.fetch("GET", `/api/v1/agent-runs/${id}/cassette`).catch((e) => e);
    assertEquals([missing.status, missing.code], [404, "cassette_not_found"]);
  } finally {
    await serve.stop();
    await home.cleanup();
    await model.close();
  }
});
