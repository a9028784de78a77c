import { Buffer } from "node:buffer";
import type { Page } from "playwright-core";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { startTestStation } from "../helpers/station.ts";
import { getRun, startRun } from "../../src/client/workflow_runs.ts";
import { SANDBOX_CONFIG } from "../sandbox/backend.ts";
import { getAgentRun, startAgentRun } from "../../src/client/agent_runs.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";

// The dashboard in a real Chromium (Debian's package, driven by playwright-core) against a real station:
// keyboard navigation, starting a run from its workflow page and watching it finish without a reload,
// an approval, a file's round trip, error states, and no console errors. Screenshots are kept in
// .cache/test-artifacts/dashboard (docs/images holds the committed ones).

const WORKFLOWS = [
  {
    id: "greet",
    name: "Greet someone",
    description: "Waits a moment, then greets.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", default: "Ada" } },
      required: ["name"],
    },
    states: [
      { id: "pause", type: "timer", duration: "2s", next: "hello" },
      { id: "hello", type: "inject", data: { greeting: "hello ${$input.name}" } },
    ],
  },
  {
    id: "ship",
    states: [
      {
        id: "ask",
        type: "human_approval",
        message: "Ship it?",
        approvers: ["ops"],
        onReject: "stop",
        next: "go",
      },
      { id: "go", type: "inject", data: { shipped: true }, end: true },
      { id: "stop", type: "inject", data: { shipped: false } },
    ],
  },
  { id: "broken", states: [{ id: "explode", type: "transform", expression: '$error("boom")' }] },
  { id: "delegate", states: [{ id: "plan", type: "agent", agent: "Boss", task: "plan the ${$input.what}" }] },
];

// Boss asks its child agent Helper (a tool call), whose long answer is cut to agents.max_tool_output.
const AGENTS = {
  Boss: '---\nmodel: openai/test-model\nagents: [Helper]\n---\n{{role "system"}}\nYou are the boss.\n' +
    '{{role "user"}}\n{{userInput}}\n',
  Helper:
    '---\nmodel: openai/test-model\n---\n{{role "system"}}\nYou help.\n{{role "user"}}\n{{userInput}}\n',
};

/** Released by the test: the answer to "take your time" waits for it. */
const slow = Promise.withResolvers<void>();

/**
 * The scripted model: Boss calls Helper, then answers; Helper answers at length; "take your time" waits
 * for the test; "wait for me" never gets an answer (it is canceled).
 */
function bossAndHelper(r: ModelRequest) {
  const system = String(r.body.messages[0]?.content ?? "");
  const last = String(r.body.messages.at(-1)?.content ?? "");
  if (last.includes("wait for me")) return { hold: new Promise<void>(() => {}) };
  if (last.includes("take your time")) return { hold: slow.promise, text: "Took my time." };
  if (system.includes("You help")) return { text: "step ".repeat(100), usage: { input: 8, output: 100 } };
  if (!r.body.messages.some((m: { role: string }) => m.role === "tool")) {
    return {
      text: "Let me ask Helper.",
      calls: [{ name: "__agent_helper", args: { task: "list the steps" } }],
      usage: { input: 120, output: 30, cached: 20 },
    };
  }
  return { text: "The plan is ready.", usage: { input: 200, output: 10, cached: 100 } };
}

// page.evaluate takes strings here: they run in the browser, and the tests are type-checked without the DOM lib.
const FOCUSED_TEXT = `document.activeElement?.textContent?.trim() ?? ""`;

/** Form controls with no label and buttons or links with no text (their outerHTML). */
const UNNAMED_CONTROLS =
  `[...document.querySelectorAll("input:not([type=hidden]), select, textarea, button, a")]
  .filter((el) => el.matches("button, a") ? !(el.textContent.trim() || el.getAttribute("aria-label"))
    : !(el.labels?.length || el.getAttribute("aria-label")))
  .map((el) => el.outerHTML)`;

/** Presses Tab until the focused element's text is `text` (at most 15 times); returns its tag. */
async function tabTo(page: Page, text: string): Promise<void> {
  for (let i = 0; i < 15; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(FOCUSED_TEXT);
    if (focused === text) return;
  }
  throw new Error(`Tab never reached "${text}"`);
}

/** The focused element shows a visible focus ring (:focus-visible outline). */
async function focusRingVisible(page: Page): Promise<boolean> {
  return await page.evaluate(`(() => {
    const el = document.activeElement;
    const style = getComputedStyle(el);
    return el.matches(":focus-visible") && style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
  })()`);
}

Deno.test("dashboard in Chromium: keyboard navigation, a run started and watched live, an approval, files, a sandbox closed, agent runs, errors", async () => {
  const model = startModelServer();
  model.route(bossAndHelper);
  const home = await tempHome();
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  for (const [name, text] of Object.entries(AGENTS)) {
    Deno.writeTextFileSync(home.path("environments", "default", "agents", `${name}.prompt`), text);
  }
  const ts = await startTestStation({
    home,
    configYaml: SANDBOX_CONFIG +
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nagents:\n  max_tool_output: 256\n`,
  });
  const b = await startBrowser("dashboard");
  try {
    const url = ts.station.url;
    for (const w of WORKFLOWS) {
      const res = await fetch(`${url}/api/v1/workflows`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(w),
      });
      assertEquals(res.status, 201, await res.text());
    }
    const example = await fetch(`${url}/api/v1/workflows`, {
      method: "POST",
      headers: { "content-type": "application/yaml" },
      body: await Deno.readTextFile(
        new URL("../../examples/workflows/deploy-with-approval.workflow.yaml", import.meta.url),
      ),
    });
    assertEquals(example.status, 201, await example.text());
    const { page, errors } = await b.page();

    // Keyboard: the skip link comes first and shows a focus ring; the navigation is reachable by Tab.
    await page.goto(`${url}/ui`);
    assertEquals(new URL(page.url()).pathname, "/ui/runs");
    await page.keyboard.press("Tab");
    assertEquals(await page.evaluate(FOCUSED_TEXT), "Skip to content");
    assert(await focusRingVisible(page), "the focused skip link has a visible outline");
    await tabTo(page, "Workflows");
    assert(await focusRingVisible(page));
    await Promise.all([page.waitForURL("**/ui/workflows"), page.keyboard.press("Enter")]);
    await tabTo(page, "greet");
    await Promise.all([page.waitForURL("**/ui/workflows/greet"), page.keyboard.press("Enter")]);
    assertEquals(await page.locator("svg[role=img] title").textContent(), "State graph: 2 states");

    // Error states: input that is not JSON, then input the schema refuses; the page stays, the alert says why.
    const input = page.getByLabel(/^Input \(JSON/);
    await input.fill("{");
    await page.getByRole("button", { name: "Start run of v1" }).click();
    const alert = page.locator("form[aria-label='Start a run'] [role=alert]");
    await alert.filter({ hasText: "input is not valid JSON" }).waitFor();
    assertMatch(await alert.textContent() ?? "", /input is not valid JSON/);
    await input.fill('{"name": 42}');
    await page.getByRole("button", { name: "Start run of v1" }).click();
    await alert.filter({ hasText: "must be string" }).waitFor();
    assertMatch(await alert.textContent() ?? "", /inputSchema of greet: \/name must be string/);
    assertEquals(new URL(page.url()).pathname, "/ui/workflows/greet");
    // The refused start is the only console error so far (Chromium logs the 400 answer).
    assertEquals(errors.length, 1, errors.join("\n"));
    assertMatch(errors[0], /status of 400/);
    errors.length = 0;

    // Start a run from the keyboard and watch it finish live: the page is never reloaded.
    await input.fill('{"name": "Grace"}');
    await input.focus();
    await tabTo(page, "Start run of v1");
    await Promise.all([page.waitForURL(/\/ui\/runs\/[0-9A-Z]{26}$/), page.keyboard.press("Enter")]);
    await page.evaluate("globalThis.marker = 1");
    await page.locator("#run-live dd .status:not(.status-completed)").waitFor();
    await page.locator("#run-live dd .status-completed").waitFor({ timeout: 15_000 });
    await page.locator("ol.events li", { hasText: "run_completed" }).waitFor();
    assertEquals(await page.evaluate("globalThis.marker"), 1, "the run page was not reloaded");
    assertMatch(await page.locator("pre[aria-label='Run result']").textContent() ?? "", /hello Grace/);
    await page.getByText("output", { exact: true }).last().click();
    assertMatch(
      await page.locator("pre[aria-label='Output of hello, attempt 1']").textContent() ?? "",
      /hello Grace/,
    );
    await b.screenshot(page, "run", { fullPage: true });

    // The runs list shows it, and filters by workflow and status.
    await page.goto(`${url}/ui/runs?workflow=greet&status=completed`);
    assertEquals(await page.locator("#runs tbody tr").count(), 1);
    await page.goto(`${url}/ui/runs?workflow=greet&status=failed`);
    await page.getByText("No runs match this search.").waitFor();

    // An approval: decided on the approvals page with a comment; the run goes on.
    const ship = await startRun(ts.client, { workflowId: "ship", input: {} });
    await page.goto(`${url}/ui/approvals`);
    await page.getByText("Ship it?").first().waitFor();
    await page.getByLabel("Your name").fill("ops");
    await page.getByLabel("Comment").fill("looks good");
    await b.screenshot(page, "approvals");
    await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Approve" }).click()]);
    await page.locator("tbody tr", { hasText: "looks good" }).waitFor();
    assertEquals(await page.locator("tbody tr .status-approved").count(), 1);
    for (let i = 0; i < 50 && (await getRun(ts.client, ship.id)).status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals((await getRun(ts.client, ship.id)).result, { shipped: true });

    // Files: upload, see it listed, download the same bytes, delete it.
    await page.goto(`${url}/ui/files`);
    await page.getByLabel("Key (optional)").fill("notes/hello.txt");
    await page.getByLabel("File", { exact: true }).setInputFiles({
      name: "hello.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("hello from the browser\n"),
    });
    await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Upload" }).click()]);
    await page.locator("tbody code", { hasText: "notes/hello.txt" }).waitFor();
    await b.screenshot(page, "files");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download notes/hello.txt" }).click(),
    ]);
    assertEquals(await Deno.readTextFile(await download.path()), "hello from the browser\n");
    await page.getByRole("button", { name: "Delete notes/hello.txt" }).click();
    await page.getByText("No files.").waitFor();

    // A failed run shows its error; an unknown run is a page, not a JSON answer.
    const broken = await startRun(ts.client, { workflowId: "broken", input: {} });
    await page.goto(`${url}/ui/runs/${broken.id}`);
    await page.locator("#run-live [role=alert]", { hasText: "Run failed" }).waitFor({ timeout: 10_000 });
    assertMatch(
      await page.locator("#run-live [role=alert]", { hasText: "Run failed" }).textContent() ?? "",
      /boom/,
    );
    // The runs list picks up a new run by itself (htmx polls it), without a reload.
    await page.goto(`${url}/ui/runs`);
    await page.evaluate("globalThis.marker = 2");
    const late = await startRun(ts.client, { workflowId: "greet", input: { name: "Linus" } });
    await page.locator("#runs tbody tr", { hasText: late.id }).waitFor();
    assertEquals(await page.evaluate("globalThis.marker"), 2, "the runs page was not reloaded");
    await page.locator("#runs tbody tr", { hasText: late.id }).locator(".status-completed").waitFor();
    await b.screenshot(page, "runs");
    const missing = await page.goto(`${url}/ui/runs/01NOSUCHRUN`);
    assertEquals(missing?.status(), 404);
    await page.getByText("run_not_found:").waitFor();
    errors.splice(0, errors.length, ...errors.filter((e) => !/status of 404/.test(e)));

    // The example's graph: its branches are labelled with the field that takes them.
    await page.goto(`${url}/ui/workflows/deploy-with-approval`);
    assertMatch(await page.locator("svg desc").textContent() ?? "", /approve to rejected \(onReject\)/);
    await b.screenshot(page, "workflow");

    // An agent step: the run page links its agent run, whose page shows the turns, the tool call and the usage.
    const delegated = await startRun(ts.client, { workflowId: "delegate", input: { what: "launch" } });
    await page.goto(`${url}/ui/runs/${delegated.id}`);
    await page.locator("#run-live dd .status-completed").waitFor({ timeout: 15_000 });
    const agentLink = page.locator("#run-live table", { hasText: "Agent runs of this run" }).locator("a")
      .first();
    await Promise.all([page.waitForURL(/\/ui\/agent-runs\/arun_/), agentLink.click()]);
    await page.locator("#agent-run-live dd .status-completed").waitFor();
    const call = page.locator("table", { hasText: "Tool calls of turn 1" }).locator("tbody tr");
    assertEquals(await call.count(), 1);
    assertMatch(await call.locator("td").first().textContent() ?? "", /__agent_helper/);
    assertMatch(
      await call.getByLabel(/^Input of __agent_helper/).textContent() ?? "",
      /"task": "list the steps"/,
    );
    assertMatch(await call.textContent() ?? "", /500 bytes\s*truncated/);
    assertEquals(
      await page.locator("table.usage tbody td").allTextContents(),
      ["320", "40", "120", "360", "-"],
      "usage in, out, cached, total over both turns; no cost (the test model has no price)",
    );
    assertMatch(await page.getByLabel("The model's text in turn 1").textContent() ?? "", /Let me ask Helper/);
    assertMatch(await page.getByLabel("Agent response").textContent() ?? "", /The plan is ready/);
    await page.locator("ol.events li", { hasText: "run_completed" }).waitFor();
    await b.screenshot(page, "agent-run", { fullPage: true });
    // The child agent's run is linked from its tool call, and links back to its parent.
    await Promise.all([
      page.waitForURL(/\/ui\/agent-runs\/arun_/),
      call.locator("td").first().locator("a").click(),
    ]);
    await page.getByText("agent run", { exact: false }).locator("a").first().waitFor();
    assertMatch(await page.locator("#agent-run-live dl").textContent() ?? "", /Helper/);

    // The agent runs list: filtered by agent and status, and a new run shows up by itself.
    await page.goto(`${url}/ui/agent-runs?agent=Boss&status=completed`);
    assertEquals(await page.locator("#agent-runs tbody tr").count(), 1);
    await page.goto(`${url}/ui/agent-runs?agent=Boss&status=failed`);
    await page.getByText("No agent runs match.").waitFor();
    await page.goto(`${url}/ui/agent-runs`);
    await page.evaluate("globalThis.marker = 3");
    const held = await startAgentRun(ts.client, "Helper", { task: "wait for me" });
    await page.locator("#agent-runs tbody tr", { hasText: held.run_id }).locator(".status-running").waitFor();
    assertEquals(await page.evaluate("globalThis.marker"), 3, "the agent runs page was not reloaded");
    await b.screenshot(page, "agent-runs");
    // An agent run's page follows the run live: its answer shows up without a reload.
    const later = await startAgentRun(ts.client, "Helper", { task: "take your time" });
    await page.goto(`${url}/ui/agent-runs/${later.run_id}`);
    await page.locator("#agent-run-live dd .status-running").waitFor();
    await page.evaluate("globalThis.marker = 4");
    slow.resolve();
    await page.locator("#agent-run-live dd .status-completed").waitFor();
    assertMatch(await page.getByLabel("Agent response").textContent() ?? "", /Took my time/);
    assertEquals(await page.evaluate("globalThis.marker"), 4, "the agent run page was not reloaded");
    // Cancel from its page: the model call is aborted and the run ends canceled.
    await page.goto(`${url}/ui/agent-runs/${held.run_id}`);
    await page.getByRole("button", { name: "Cancel agent run" }).click();
    await page.locator("#agent-run-live dd .status-canceled").waitFor();
    assertEquals((await getAgentRun(ts.client, held.run_id)).status, "canceled");

    // Sandboxes: an open one is listed, and closed from the page.
    const opened = await fetch(`${url}/api/v1/sandboxes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ runtime: "sh" }),
    });
    assertEquals(opened.status, 201);
    const { sandbox_id: sandboxId } = await opened.json();
    await page.goto(`${url}/ui/sandboxes`);
    await page.getByRole("button", { name: `Close sandbox ${sandboxId}` }).click();
    await page.getByText("No sandboxes.").waitFor();
    await page.goto(`${url}/ui/sandboxes?all=1`);
    await page.locator("tbody tr", { hasText: sandboxId }).locator(".status-closed").waitFor();
    // Every main page: the skip link comes first, every control has a label and every button a name.
    for (
      const path of [
        "/ui/runs",
        "/ui/approvals",
        "/ui/workflows",
        "/ui/workflows/greet",
        "/ui/files",
        "/ui/sandboxes",
        "/ui/agent-runs",
        `/ui/agent-runs/${held.run_id}`,
      ]
    ) {
      await page.goto(url + path);
      await page.keyboard.press("Tab");
      assertEquals(await page.evaluate(FOCUSED_TEXT), "Skip to content", path);
      assertEquals(await page.evaluate(UNNAMED_CONTROLS), [], `${path}: controls without a label or name`);
    }
    assertEquals(errors, []);
  } finally {
    await b.close();
    await ts.close();
    await model.close();
    await home.cleanup();
  }
});
