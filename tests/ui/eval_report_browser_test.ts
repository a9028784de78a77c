import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { sampleEvalRun } from "../helpers/eval_runs.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

// The report `stn eval report -o report.html` writes, opened in a real Chromium from the file (as a user opens an
// attachment): no console error, the aggregates and charts show, and a case's drill-down opens to its answer,
// the judge's reasoning and its tool calls. Its screenshots are docs/images/eval-report*.png.

Deno.test("eval report in Chromium: a 20-case report opens without a console error and drills down into a case", async () => {
  const home = await tempHome();
  const b = await startBrowser("eval-report");
  try {
    const file = join(home.home, "eval.json");
    await Deno.writeTextFile(file, JSON.stringify(sampleEvalRun(20)));
    const report = join(home.home, "report.html");
    const r = await runStn(["eval", "report", file, "-o", report], { env: { STATION_HOME: home.home } });
    assertEquals(r.code, 0, r.stderr);

    const { page, errors } = await b.page();
    const requests: string[] = [];
    page.on("request", (req) => requests.push(req.url()));
    await page.goto(`file://${report}`);
    assertEquals(await page.getByRole("heading", { level: 1 }).textContent(), "Eval report: Capitals");
    const judge = page.getByRole("table", { name: "Aggregates per scorer" }).getByRole("row", {
      name: /judge/,
    });
    assertMatch(await judge.textContent() ?? "", /judge\s*19\s*1\s*0\.52\s*0\.55\s*0\.85\s*30\.0%/);
    assertEquals(await page.getByRole("img", { name: /^judge: scores: 19 value\(s\)/ }).count(), 1);
    assertMatch(
      await page.getByRole("table", { name: "Tool effectiveness" }).textContent() ?? "",
      /__geocode\s*3\s*0\s*3\s*0%\s*upstream 503 \(×3\)/,
    );

    await b.screenshot(page, "eval-report");
    await page.getByRole("heading", { name: "Score distributions" }).evaluate((h) => h.scrollIntoView());
    await b.screenshot(page, "eval-report-charts");

    // The case list links to each drill-down; opening one shows its answer, reasoning and tool calls.
    const details = page.locator("details#case-14-0");
    assertEquals(await details.getAttribute("open"), null);
    await details.locator("summary").click();
    assertEquals(await details.getAttribute("open"), "");
    const scores = details.getByRole("table", { name: "Scores of case-14" });
    assertMatch(await scores.textContent() ?? "", /Judge reasoning for case 14: accurate=true, complete\./);
    await details.scrollIntoViewIfNeeded();
    await b.screenshot(page, "eval-report-case");
    assertMatch(
      await details.locator("ol.calls").textContent() ?? "",
      /__lookup\s*completed\s*__geocode\s*failed upstream 503/,
    );
    // case-3's answer is markup; it shows as text and runs nothing.
    await page.locator("details#case-3-0 summary").click();
    assertMatch(
      await page.getByLabel("Answer of case-3").textContent() ?? "",
      /<script>alert\('x'\)<\/script> Paris/,
    );
    // A malformed judge answer is a scored error of that case.
    await page.locator("details#case-5-0 summary").click();
    assertMatch(
      await page.getByRole("table", { name: "Scores of case-5" }).textContent() ?? "",
      /judge_answer_invalid: the judge's answer is not JSON/,
    );

    assertEquals(errors, []);
    // Self-contained: the page loaded nothing but itself.
    assertEquals(requests, [`file://${report}`]);
  } finally {
    await b.close();
    await home.cleanup();
  }
});
