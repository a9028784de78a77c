import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe } from "../helpers/stn.ts";

// Tool calls you can see (issue 35): a real `stn serve`, a real MCP server over stdio, the scripted model.
// Each call's input, output (2 KB unless asked for all), times and server in `stn agent inspect` (text,
// --json, --full), the API's tool-call route, the run's events and the dashboard's agent-run page (Chromium).

const AGENT = `---
model: openai/test-model
tools: ["__echo", "__big"]
max_steps: 3
---
{{role "system"}}
You look things up.
{{role "user"}}
{{userInput}}
`;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/;

Deno.test("tool calls: input, output, times and server in stn agent inspect, the API, events and the dashboard", async () => {
  const model = startModelServer();
  model.route((r: ModelRequest) =>
    r.body.messages.some((m: { role: string }) => m.role === "tool") ? { text: "Looked it up." } : {
      calls: [{ name: "__echo", args: { text: "hello there" } }, { name: "__big", args: { bytes: 5000 } }],
    }
  );
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const env = home.path("environments", "default");
  await Deno.mkdir(join(env, "agents"), { recursive: true });
  await Deno.mkdir(join(env, "mcp-configs"), { recursive: true });
  await Deno.writeTextFile(join(env, "agents", "Lookup.prompt"), AGENT);
  await Deno.writeTextFile(
    join(env, "mcp-configs", "servers.json"),
    JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
  );
  const serve = await startServe({ env: home.env, home: home.home, timeoutMs: 60_000 });
  const cli = { env: { ...home.env, STATION_URL: serve.url } };
  const b = await startBrowser("tool-calls");
  try {
    const sync = await runStn(["sync", "--trust"], cli);
    assertEquals(sync.code, 0, sync.stderr);
    const ran = await runStn(["agent", "run", "Lookup", "find it", "--json"], cli);
    assertEquals(ran.code, 0, ran.stderr);
    const runId = JSON.parse(ran.stdout).run_id as string;

    // --json: each call's input, output (the first 2 KB of __big's 5000 bytes), times and server.
    const inspect = await runStn(["agent", "inspect", runId, "--json"], cli);
    assertEquals(inspect.code, 0, inspect.stderr);
    const calls = JSON.parse(inspect.stdout).tool_calls;
    assertEquals(calls.map((c: Record<string, unknown>) => [c.name, c.server, c.status, c.arguments]), [
      ["__echo", "local", "completed", { text: "hello there" }],
      ["__big", "local", "completed", { bytes: 5000 }],
    ]);
    assertStringIncludes(calls[0].output, "hello there");
    assertEquals(calls[0].output_partial, false);
    assertEquals([calls[1].output_bytes, calls[1].output_partial], [5000, true]);
    assertStringIncludes(calls[1].output, "[output cut: 2952 of 5000 bytes not shown]");
    for (const c of calls) {
      assertMatch(c.started_at, ISO);
      assertMatch(c.ended_at, ISO);
      assert(c.ended_at >= c.started_at && c.duration_ms >= 0, JSON.stringify(c));
    }
    // --full: the whole output; the text view shows input and output under each call.
    const full = JSON.parse((await runStn(["agent", "inspect", runId, "--json", "--full"], cli)).stdout);
    assertEquals(full.tool_calls[1].output, "abcdefghij".repeat(500));
    const text = (await runStn(["agent", "inspect", runId], cli)).stdout;
    assertMatch(text, /turn 1 __echo \[\S+\] on local: completed, \S+Z → \S+Z/);
    assertStringIncludes(text, '"text": "hello there"');
    assertStringIncludes(text, "… (the first 2 KB; --full shows all)");

    // The API's tool-call route: the whole output; the run's events carry the same.
    const one = await (await fetch(`${serve.url}/api/v1/agent-runs/${runId}/tool-calls/${calls[1].call_id}`))
      .json();
    assertEquals([one.output.length, one.server, one.output_partial], [5000, "local", false]);
    const missing = await fetch(`${serve.url}/api/v1/agent-runs/${runId}/tool-calls/nope`);
    assertEquals([missing.status, (await missing.json()).error.code], [404, "agent_tool_call_not_found"]);
    const sse = await (await fetch(`${serve.url}/api/v1/agent-runs/${runId}/events`)).text();
    const returned = sse.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
      .filter((e) => e.type === "tool_returned").map((e) => e.data);
    assertEquals(returned.map((d) => [d.name, d.server, d.status, d.output_partial]), [
      ["__echo", "local", "completed", false],
      ["__big", "local", "completed", true],
    ]);
    assertMatch(returned[0].ended_at, ISO);

    // The dashboard: the call's row names its server and times; input and output expand.
    const { page, errors } = await b.page();
    await page.goto(`${serve.url}/ui/agent-runs/${runId}`);
    const rows = page.locator("table", { hasText: "Tool calls of turn 1" }).locator("tbody tr");
    assertEquals(await rows.count(), 2);
    const big = rows.nth(1);
    assertMatch(await big.locator("td").nth(1).textContent() ?? "", /^local$/);
    assertMatch(await big.locator("td time").first().getAttribute("datetime") ?? "", ISO);
    // The page re-renders its live part on each event it is sent (closing an open <details>): let the
    // stream deliver the run's end and that last refresh land before unfolding anything.
    await page.locator("ol.events li", { hasText: /run_completed/ }).first().waitFor();
    await page.waitForLoadState("networkidle");
    const output = big.getByLabel(/^Output of __big/);
    assert(!(await output.isVisible()), "the output is folded until asked for");
    await big.getByText("Output · 5000 bytes").click();
    await output.waitFor();
    assertStringIncludes(await output.textContent() ?? "", "abcdefghij");
    await big.getByText("Input", { exact: true }).click();
    assertMatch(await big.getByLabel(/^Input of __big/).textContent() ?? "", /"bytes": 5000/);
    const link = big.getByRole("link", { name: "The whole output (JSON)" });
    const whole = await (await page.request.get(`${serve.url}${await link.getAttribute("href")}`)).json();
    assertEquals(whole.output.length, 5000);
    await b.screenshot(page, "agent-run-tool-calls", { fullPage: true });
    assertEquals(errors, []);
  } finally {
    await b.close();
    await serve.stop();
    await home.cleanup();
    await model.close();
  }
});
