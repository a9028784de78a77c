import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe } from "../helpers/stn.ts";

// A real station (the scripted model standing in for the provider and the judge) runs a 20-case dataset at
// concurrency 5, then again with a worse-answering model against the first as baseline. `stn eval report <id>`
// writes the first's HTML report, opened in Chromium from the file; the dashboard's Evals pages show both runs,
// one run with its charts and drill-down (linked to its agent runs), and their comparison. With ai.prices set,
// every case's cost is its agent run's tokens and its judge call's tokens at those prices.

const PRICE = { input: 2, output: 8 }; // USD per million tokens
const RUN = { input: 10, output: 3 }, JUDGE = { input: 50, output: 10 };
const CASE_COST = (RUN.input * PRICE.input + RUN.output * PRICE.output + JUDGE.input * PRICE.input +
  JUDGE.output * PRICE.output) / 1e6;

const userOf = (r: ModelRequest) =>
  String(r.body.messages.find((m: { role: string }) => m.role === "user")?.content ?? "");
const isJudge = (r: ModelRequest) =>
  String(r.body.messages[0]?.content ?? "").includes("impartial evaluator");

function dataset(n: number): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `c${i + 1}`,
      task: `what is q${i + 1}?`,
      expected: `answer ${i + 1}`,
      rubric: "the answer names the number asked for",
    })).join("\n") + "\n";
}

Deno.test("evals in Chromium: a real 20-case eval's report file and the dashboard's Evals pages (list, one run, compare); cost is the price table's arithmetic", async () => {
  const model = startModelServer();
  let worse = false;
  model.route((r) => {
    const q = /q(\d+)\?/.exec(userOf(r))?.[1] ?? "?";
    if (isJudge(r)) {
      if (q === "7") return { text: "I think it is fine", usage: JUDGE };
      const good = !worse || Number(q) > 3;
      return {
        text: JSON.stringify({ score: good ? 0.9 : 0.1, reasoning: `q${q} is ${good ? "right" : "wrong"}` }),
        usage: JUDGE,
      };
    }
    return { text: worse && Number(q) <= 3 ? "no idea" : `answer ${q}`, usage: RUN };
  });
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  model: test-model\n  base_url: ${model.url}\n  api_key: sk-test\n` +
      `  prices:\n    openai/test-model: { input_per_million: ${PRICE.input}, output_per_million: ${PRICE.output} }\n` +
      "sandbox:\n  enabled: false\n",
  );
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.writeTextFileSync(
    `${env}/agents/Answerer.prompt`,
    '---\nmodel: openai/test-model\nmax_steps: 3\n---\n{{role "system"}}\nYou answer questions.\n' +
      '{{role "user"}}\n{{userInput}}\n',
  );
  const file = home.path("qa.jsonl");
  Deno.writeTextFileSync(file, dataset(20));
  const serve = await startServe({ env: home.env, home: home.home });
  const b = await startBrowser("evals");
  try {
    const first = await runStn(
      ["eval", "run", "Answerer", "--dataset", file, "--concurrency", "5", "--json"],
      {
        env: home.env,
      },
    );
    assertEquals(first.code, 0, first.stderr);
    const a = JSON.parse(first.stdout);
    assertEquals([a.status, a.cases_done], ["completed", 20]);
    // Each case: its run (10 in, 3 out) and its judge call (50 in, 10 out) at $2/M in, $8/M out.
    for (const c of a.cases) assert(Math.abs(c.cost_usd - CASE_COST) < 1e-12, `${c.case_id}: ${c.cost_usd}`);
    assert(Math.abs(a.cost_usd - 20 * CASE_COST) < 1e-12, `the eval's cost: ${a.cost_usd}`);
    const agentRun = await runStn(["agent", "inspect", a.cases[0].run_id, "--json"], { env: home.env });
    const runCost = JSON.parse(agentRun.stdout).cost_usd;
    assert(
      Math.abs(runCost - (RUN.input * PRICE.input + RUN.output * PRICE.output) / 1e6) < 1e-12,
      `${runCost}`,
    );

    worse = true;
    const second = await runStn(
      ["eval", "run", "Answerer", "--dataset", file, "--concurrency", "5", "--baseline", a.eval_id, "--json"],
      { env: home.env },
    );
    assertEquals(second.code, 1, second.stderr);
    const headId: string = JSON.parse(second.stdout).error.details.eval_id;

    // /metrics counts what the agent's calls and the judge's cost, by model and agent (40 cases, both evals).
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    const series = (agent: string) =>
      Number(
        new RegExp(`^stn_agent_cost_usd_total\\{model="openai/test-model",agent="${agent}"\\} (\\S+)$`, "m")
          .exec(metrics)?.[1],
      );
    const runOnly = (RUN.input * PRICE.input + RUN.output * PRICE.output) / 1e6;
    assert(Math.abs(series("Answerer") - 40 * runOnly) < 1e-9, `Answerer: ${series("Answerer")}`);
    assert(
      Math.abs(series("eval:judge") - 40 * (CASE_COST - runOnly)) < 1e-9,
      `judge: ${series("eval:judge")}`,
    );

    // The API answers the report too: Markdown or HTML; a bad format or an unknown eval run is a clear 4xx.
    const md = await fetch(`${serve.url}/api/v1/evals/${a.eval_id}/report?format=md`);
    assertEquals([md.status, md.headers.get("content-type")], [200, "text/markdown; charset=utf-8"]);
    assertMatch(await md.text(), /^<!-- stn eval report -->\n# Eval report: Answerer\n/);
    const pdf = await fetch(`${serve.url}/api/v1/evals/${a.eval_id}/report?format=pdf`);
    assertEquals([pdf.status, (await pdf.json()).error.code], [400, "invalid_request"]);
    const none = await fetch(`${serve.url}/api/v1/evals/eval_nope/report`);
    assertEquals([none.status, (await none.json()).error.code], [404, "eval_not_found"]);

    // The report file, fetched by id from the station and opened as a user opens an attachment.
    const report = home.path("report.html");
    const wrote = await runStn(["eval", "report", a.eval_id, "-o", report], { env: home.env });
    assertEquals(wrote.code, 0, wrote.stderr);
    const { page, errors } = await b.page();
    await page.goto(`file://${report}`);
    const judge = page.getByRole("table", { name: "Aggregates per scorer" }).getByRole("row", {
      name: /judge/,
    });
    assertMatch(await judge.textContent() ?? "", /judge\s*19\s*1\s*0\.90\s*0\.90\s*0\.90/);
    await page.locator("details#case-6-0 summary").click();
    assertMatch(
      await page.getByRole("table", { name: "Scores of c7", exact: true }).textContent() ?? "",
      /judge\s*–\s*no\s*–\s*eval_judge_invalid/,
    );
    await page.locator("details#case-1-0 summary").click();
    assertMatch(await page.getByLabel("Answer of c2", { exact: true }).textContent() ?? "", /^answer 2$/);
    assertMatch(
      await page.getByRole("table", { name: "Scores of c2", exact: true }).textContent() ?? "",
      /q2 is right/,
    );
    assertEquals(errors, []);

    // The dashboard: the list, one run, a case's drill-down linked to its agent run, the comparison.
    await page.goto(`${serve.url}/ui/runs`);
    await page.getByRole("link", { name: "Evals" }).click();
    await page.waitForURL("**/ui/evals");
    const rows = page.getByRole("table", { name: "Eval runs, newest first" }).locator("tbody tr");
    assertEquals(await rows.count(), 2);
    assertMatch(
      await rows.nth(1).textContent() ?? "",
      /Answerer agent\s*qa\s*completed\s*20\/20\s*95\.0%\s*0\.95\s*\$0\.00448/,
    );
    await b.screenshot(page, "dashboard-evals");
    await page.getByRole("link", { name: a.eval_id }).click();
    await page.waitForURL(`**/ui/evals/${a.eval_id}`);
    assertEquals(await page.getByRole("img", { name: /^judge: scores: 19 value\(s\)/ }).count(), 1);
    assertMatch(await page.locator("dl.facts").first().textContent() ?? "", /Cost\$0\.00448/);
    await b.screenshot(page, "dashboard-eval");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Markdown" }).click(),
    ]);
    assertEquals(download.suggestedFilename(), `${a.eval_id}.md`);
    const c2 = page.locator("details#case-1-0");
    await c2.locator("summary").click();
    await c2.getByRole("link", { name: a.cases[1].run_id }).click();
    await page.waitForURL(`**/ui/agent-runs/${a.cases[1].run_id}`);
    assertMatch(
      await page.getByRole("table", { name: "Token usage" }).textContent() ?? "",
      /10\s*3\s*0\s*13\s*\$0\.000044/,
    );

    await page.goto(`${serve.url}/ui/evals/${headId}`);
    assertMatch(
      await page.getByRole("heading", { name: `Compared with ${a.eval_id}` }).textContent() ?? "",
      /./,
    );
    await page.getByRole("form", { name: "Compare eval runs" }).getByRole("button", { name: "Compare" })
      .click();
    await page.waitForURL("**/ui/evals/compare?**");
    assertMatch(
      await page.getByRole("table", { name: "Regressed cases" }).textContent() ?? "",
      /c1\s*0\.95\s*0\.05.*c2.*c3/s,
    );
    await b.screenshot(page, "dashboard-eval-compare");
    assertEquals(errors, []);
  } finally {
    await b.close();
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
