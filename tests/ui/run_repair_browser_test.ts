import { getRun, runSteps, startRun, waitForRun } from "../../src/client/workflow_runs.ts";
import { saveWorkflow } from "../../src/client/workflows.ts";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { waitFor } from "../helpers/stn.ts";
import { startTestStation } from "../helpers/station.ts";

// The run page's repair parts in a real Chromium against a real station: the expression box evaluates against
// what a step saw (and shows a syntax error's position), Retry continues a failed run after the fix, Fork from
// here opens a new run whose earlier step is shown reused, linked both ways.

const prices = (total: string) => ({
  id: "prices",
  states: [
    { id: "load", type: "inject", data: { items: [{ price: 2 }, { price: 4 }] }, next: "total" },
    { id: "total", type: "transform", expression: total },
  ],
});

Deno.test("dashboard in Chromium: a run page evaluates expressions, retries a failed run and forks from a step", async () => {
  const ts = await startTestStation();
  const b = await startBrowser("run-repair");
  try {
    const { client } = ts;
    const url = ts.station.url;
    await saveWorkflow(client, prices(`{ 'total': $sum(load.items.price) + "x" }`));
    const run = await startRun(client, { workflow_id: "prices", input: {} });
    assertEquals((await waitForRun(client, run.id, { timeoutMs: 20_000 }))!.status, "failed");
    const { page, errors } = await b.page();
    await page.goto(`${url}/ui/runs/${run.id}`);

    const box = page.getByRole("form", { name: "Evaluate an expression" });
    await box.getByLabel("Expression (JSONata)").fill("$sum(load.items.price)");
    await box.getByLabel("Against the data this step saw").selectOption("total");
    await box.getByRole("button", { name: "Evaluate" }).click();
    const value = page.getByLabel("Expression value");
    assert(
      await waitFor(async () => (await value.textContent())?.trim() === "6"),
      await value.textContent() ?? "",
    );
    await box.getByLabel("Expression (JSONata)").fill("$sum(load.items.price");
    await box.getByRole("button", { name: "Evaluate" }).click();
    const alert = box.getByRole("alert");
    assert(await waitFor(async () => /at position \d+/.test(await alert.textContent() ?? "")));
    await b.screenshot(page, "expression-box", { fullPage: true });

    await saveWorkflow(client, prices("{ 'total': $sum(load.items.price) }"));
    await page.getByRole("form", { name: "Retry from total" }).getByRole("button", { name: "Retry" }).click();
    assert(await waitFor(async () => (await getRun(client, run.id)).status === "completed", 20_000));
    // The page reloads after the retry and its live part follows the run's events to the end.
    const status = page.locator(".facts .status").first();
    assert(await waitFor(async () => /completed/.test(await status.textContent() ?? ""), 20_000));

    await page.getByRole("form", { name: "Fork from total" }).getByRole("button", { name: "Fork from here" })
      .click();
    await page.waitForURL((u) => u.pathname.startsWith("/ui/runs/") && !u.pathname.endsWith(run.id));
    const forkId = page.url().split("/").at(-1)!;
    assert(await waitFor(async () => (await getRun(client, forkId)).status === "completed", 20_000));
    await page.goto(`${url}/ui/runs/${forkId}`);
    const lineage = page.getByRole("definition").filter({ hasText: run.id });
    assertMatch(await lineage.textContent() ?? "", /at step total/);
    const loadRow = page.locator("tbody tr", { hasText: "reused from" });
    assertMatch(await loadRow.textContent() ?? "", /load/);
    assertEquals((await runSteps(client, forkId)).filter((s) => s.reused).map((s) => s.path), ["load"]);
    const log = page.getByRole("list", { name: "Events" });
    assert(await waitFor(async () => /step_completed · load \(reused\)/.test(await log.textContent() ?? "")));
    await b.screenshot(page, "forked-run", { fullPage: true });
    await page.getByRole("link", { name: run.id }).first().click();
    await page.waitForURL(`**/ui/runs/${run.id}`);
    assert(await page.getByRole("link", { name: forkId }).isVisible(), "the parent links to its fork");
    assertEquals(errors.filter((e) => !e.includes("422")), [], "no error but the syntax error asked for");
  } finally {
    await b.close();
    await ts.close();
  }
});
