import { startAgentRun } from "../../src/client/agent_runs.ts";
import { runSignals } from "../../src/client/events.ts";
import { getRun, listRuns, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";

// The dashboard as a place to act from (issue 31 item 9), in a real Chromium against a real station:
// helpful empty pages, searching runs by id, workflow, status and time, the error and task columns, a run
// answered from its own page (an event, an approval, a signal), who approved and when, when a timer fires,
// event payloads unfolded, running again with edited input, and the start form's error said once.

const WORKFLOWS = [
  {
    id: "greet",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", default: "Ada" } },
      required: ["name"],
    },
    states: [{ id: "hello", type: "inject", data: { greeting: "hello ${$input.name}" } }],
  },
  { id: "broken", states: [{ id: "explode", type: "transform", expression: '$error("boom")' }] },
  {
    id: "release",
    states: [
      {
        id: "ci",
        type: "await",
        event: "ci.finished",
        match: "event.data.commit = $input.commit",
        next: "ask",
      },
      { id: "ask", type: "human_approval", message: "Release it?", next: "go-ahead" },
      { id: "go-ahead", type: "await", event: "go-ahead", next: "cool-down" },
      { id: "cool-down", type: "timer", duration: "1h" },
    ],
  },
];

/** The page's visible text has no literal backtick (Markdown that was never rendered). */
const BACKTICKS = "document.querySelector('main').innerText.includes('`')";

Deno.test("dashboard in Chromium: empty states, search, error and task columns, act on a waiting run, run again", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "Done." }));
  const home = await tempHome();
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  Deno.writeTextFileSync(
    home.path("environments", "default", "agents", "Helper.prompt"),
    '---\nmodel: openai/test-model\n---\n{{role "user"}}\n{{userInput}}\n',
  );
  const ts = await startTestStation({
    home,
    configYaml:
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  });
  const b = await startBrowser("dashboard-act");
  try {
    const url = ts.station.url;
    const { page, errors } = await b.page();

    // Empty pages say what fills them, in code formatting, never with Markdown's backticks.
    await page.goto(`${url}/ui/runs`);
    await page.getByText("No runs yet.").waitFor();
    await page.locator("main code", { hasText: "stn run WORKFLOW" }).waitFor();
    assertEquals(await page.evaluate(BACKTICKS), false, "/ui/runs");
    await page.goto(`${url}/ui/workflows`);
    await page.getByText("No workflows stored yet.").waitFor();
    await page.locator("main code", { hasText: "stn sync" }).waitFor();
    assertEquals(await page.evaluate(BACKTICKS), false, "/ui/workflows");
    await page.goto(`${url}/ui/agent-runs`);
    await page.getByText("No agent runs yet.").waitFor();
    assertEquals(await page.evaluate(BACKTICKS), false, "/ui/agent-runs");
    await page.goto(`${url}/ui/tests`);
    assertEquals(await page.evaluate(BACKTICKS), false, "/ui/tests");
    await ts.client.json("POST", "/api/v1/sync", { body: {} });
    for (const w of WORKFLOWS) await ts.client.json("POST", "/api/v1/workflows", { body: w });

    // The start form's error: said once, without the shell's hint (`--input`).
    await page.goto(`${url}/ui/workflows/greet`);
    await page.getByLabel(/^Input \(JSON/).fill('{"name": 42}');
    await page.getByRole("button", { name: "Start run of v1" }).click();
    const alert = page.locator("form[aria-label='Start a run'] [role=alert]");
    await alert.filter({ hasText: "must be string" }).waitFor();
    const said = await alert.textContent() ?? "";
    assertEquals(said.split("must be string").length - 1, 1, `said once: ${said}`);
    assert(!said.includes("--input"), `no CLI hint: ${said}`);
    errors.length = 0; // Chromium logs the refused start's 400

    // Runs: the error column, and search by run id, workflow, status and time.
    const ok = await startRun(ts.client, { workflow_id: "greet", input: { name: "Grace" } });
    const failed = await startRun(ts.client, { workflow_id: "broken", input: {} });
    assert(await waitFor(async () => (await getRun(ts.client, failed.run_id)).status === "failed"));
    assert(await waitFor(async () => (await getRun(ts.client, ok.run_id)).status === "completed"));
    await page.goto(`${url}/ui/runs`);
    const failedRow = page.locator("#runs tbody tr", { hasText: failed.run_id });
    assertMatch(await failedRow.locator("td").last().textContent() ?? "", /boom/);
    await page.getByLabel("Run id").fill(ok.run_id);
    await Promise.all([page.waitForURL(/run=/), page.getByRole("button", { name: "Search" }).click()]);
    assertEquals(await page.locator("#runs tbody tr").count(), 1);
    assertMatch(await page.locator("#runs tbody tr").textContent() ?? "", new RegExp(ok.run_id));
    await page.goto(`${url}/ui/runs?workflow=broken&status=failed`);
    assertEquals(await page.locator("#runs tbody tr").count(), 1);
    const later = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
    await page.goto(`${url}/ui/runs?from=${later}`);
    await page.getByText("No runs match this search.").waitFor();
    await page.goto(`${url}/ui/runs?until=${later}&status=completed`);
    assertEquals(await page.locator("#runs tbody tr").count(), 1);
    await page.goto(`${url}/ui/runs`);
    await b.screenshot(page, "runs");

    // A run waiting for an event: sent from its page (the form knows the name), then approved there.
    const release = await startRun(ts.client, { workflow_id: "release", input: { commit: "abc" } });
    await page.goto(`${url}/ui/runs/${release.run_id}`);
    assertEquals(await page.getByLabel("Event name").inputValue(), "ci.finished");
    await page.getByLabel("Data (JSON)").fill('{"commit": "abc", "status": "green"}');
    // The form's script reloads the page once the server answered: wait for that load, not the current page's
    // (the live parts may already show the approval, and a form filled before the reload would be lost).
    await Promise.all([
      page.waitForEvent("load"),
      page.getByRole("button", { name: "Send event" }).click(),
    ]);
    await page.getByRole("heading", { name: "Waiting for approval: ask" }).waitFor();
    await page.getByLabel("Your name").fill("ops-lead");
    await page.getByLabel("Comment").fill("ship it");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.locator("ul.decisions li", { hasText: "approved by ops-lead at" }).waitFor();
    assertMatch(await page.locator("ul.decisions").textContent() ?? "", /ship it/);
    // The second wait takes a signal to this run, sent from its page; then a timer, and when it fires.
    await page.getByLabel("Signal name").fill("go-ahead");
    await page.getByLabel("Payload (JSON)").fill('{"by": "browser"}');
    await Promise.all([
      page.waitForEvent("load"),
      page.getByRole("button", { name: "Send signal" }).click(),
    ]);
    const fires = page.locator("ul.timers li", { hasText: "cool-down: timer fires at" });
    await fires.waitFor();
    const at = Date.parse(`${await fires.locator("time").getAttribute("datetime")}`);
    assert(at > Date.now() + 3_000_000, `about an hour from now: ${new Date(at).toISOString()}`);
    assertEquals((await runSignals(ts.client, release.run_id))[0].delivered_to, "go-ahead");

    // Events: each listed once with its own #seq (no list numbers), payloads folded until opened.
    const events = page.locator("ol.events");
    // The forms above reload the page: its stylesheet must have loaded before a computed style is read.
    await page.waitForLoadState("load");
    assertEquals(
      await page.evaluate("getComputedStyle(document.querySelector('ol.events')).listStyleType"),
      "none",
    );
    const received = events.locator("li details", { hasText: "approval_decided" }).first();
    await received.locator("summary").click();
    assertMatch(await received.locator("pre").textContent() ?? "", /"ops-lead"/);
    await b.screenshot(page, "run", { fullPage: true });

    // Run again with edited input: a new run of the same version, through the runs API.
    await page.goto(`${url}/ui/runs/${ok.run_id}`);
    await page.getByLabel(/^Input \(JSON; edit it/).fill('{"name": "Linus"}');
    await Promise.all([
      page.waitForURL((u) => /\/ui\/runs\/[0-9A-Z]{26}$/.test(u.pathname) && !u.pathname.endsWith(ok.run_id)),
      page.getByRole("button", { name: "Run v1 again" }).click(),
    ]);
    const again = new URL(page.url()).pathname.split("/").at(-1)!;
    await page.locator("#run-live dd .status-completed").waitFor();
    assertEquals((await getRun(ts.client, again)).input, { name: "Linus" });
    // A one-off file run runs its kept definition again (still not stored as a workflow).
    const once = await startRun(ts.client, {
      definition: { id: "once", states: [{ id: "echo", type: "transform", expression: "$input.n * 2" }] },
      input: { n: 2 },
    });
    await page.goto(`${url}/ui/runs/${once.run_id}`);
    await page.getByLabel(/^Input \(JSON; edit it/).fill('{"n": 21}');
    await Promise.all([
      page.waitForURL((u) => !u.pathname.endsWith(once.run_id)),
      page.getByRole("button", { name: "Run this definition again" }).click(),
    ]);
    const second = new URL(page.url()).pathname.split("/").at(-1)!;
    assert(await waitFor(async () => (await getRun(ts.client, second)).status === "completed"));
    assertEquals((await getRun(ts.client, second)).result, { result: 42 });
    assertEquals((await listRuns(ts.client, { workflow_id: "once" })).runs.length, 2);

    // Agent runs: the task column.
    const task = "summarise the deploy logs of last night";
    const arun = await startAgentRun(ts.client, "Helper", { task });
    await page.goto(`${url}/ui/agent-runs`);
    const cell = page.locator("#agent-runs tbody tr", { hasText: arun.run_id }).locator("td.task");
    assertEquals((await cell.textContent())?.trim(), task);
    await b.screenshot(page, "agent-runs");
    assertEquals(errors, []);
  } finally {
    await b.close();
    await ts.close();
    await model.close();
    await home.cleanup();
  }
});
