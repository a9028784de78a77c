import { join } from "node:path";
import type { EvalCompare, EvalRun } from "../../src/contract/evals.ts";
import { evalReportHtml } from "../../src/reports/eval_html.tsx";
import { evalReportMarkdown } from "../../src/reports/eval_markdown.ts";
import { distributions, histogram } from "../../src/reports/eval_stats.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { sampleEvalRun } from "../helpers/eval_runs.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

/** Asserts the report holds `part`, naming only the part when it does not (a report is long). */
function has(report: string, part: string): void {
  assert(report.includes(part), `the report lacks ${JSON.stringify(part)}`);
}

/** Asserts the report matches `pattern`, naming only the pattern when it does not. */
function like(report: string, pattern: RegExp): void {
  assert(pattern.test(report), `the report does not match ${pattern}`);
}

/** The sample run compared with a baseline in which case-1 passed. */
function withBaseline(run: EvalRun): EvalRun {
  const compare: EvalCompare = {
    base_eval_id: "eval_01BASE",
    head_eval_id: run.eval_id,
    max_regression: 0.05,
    regressed: true,
    pass_rate: { base: 0.4, head: run.aggregates.pass_rate, delta: -0.2 },
    scorers: [{
      scorer: "expected",
      base_mean: 0.9,
      head_mean: 0.75,
      delta: -0.15,
      base_pass_rate: 0.9,
      head_pass_rate: 0.75,
      pass_rate_delta: -0.15,
      regressed: true,
    }],
    cases: [{
      case_id: "case-1",
      base_score: 0.9,
      head_score: 0.4,
      delta: -0.5,
      base_passed: true,
      head_passed: false,
      regressed: true,
      scorers: { expected: -1 },
    }],
    regressed_cases: ["case-1"],
    only_in_base: [],
    only_in_head: ["case-19"],
  };
  return { ...run, baseline: { eval_id: "eval_01BASE", max_regression: 0.05, compare } };
}

Deno.test("eval report: score distributions count every scored case into 0–1 bins, and values into their range", () => {
  const run = sampleEvalRun();
  const byScorer = new Map(distributions(run, run.cases!).map((d) => [d.scorer, d]));
  const total = (bins: { count: number }[]) => bins.reduce((n, b) => n + b.count, 0);
  assertEquals(total(byScorer.get("expected")!.scores), 20);
  // case-5's judge answer was malformed: 19 scores.
  assertEquals(total(byScorer.get("judge")!.scores), 19);
  assertEquals(byScorer.get("judge")!.scores.length, 10);
  assertEquals(byScorer.get("expected")!.scores.map((b) => b.count), [5, 0, 0, 0, 0, 0, 0, 0, 0, 15]);
  const latency = byScorer.get("latency")!.values!;
  assertEquals([latency.unit, total(latency.bins), latency.bins[0].from, latency.bins.at(-1)!.to], [
    "ms",
    20,
    400,
    1065,
  ]);
  assertEquals(histogram([3, 3], 4), [{ from: 3, to: 3, count: 2 }]);
  assertEquals(histogram([], 4), []);
});

Deno.test("eval report: the HTML is one self-contained page with aggregates, charts and each case's drill-down", async () => {
  const html = await evalReportHtml(withBaseline(sampleEvalRun()));
  assert(html.startsWith("<!DOCTYPE html>"));
  // Nothing to load: no script, no stylesheet link, no image or font from elsewhere.
  assertEquals(/<script|<link|src=|url\(/i.test(html), false);
  // A case's answer is text, never markup.
  has(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; Paris");
  assertMatch(
    html,
    /<th scope="row">judge<\/th><td>19<\/td><td>1<\/td><td>0\.52<\/td><td>0\.55<\/td><td>0\.85<\/td><td>30\.0%<\/td>/,
  );
  assertEquals(html.match(/<svg /g)?.length, 4); // expected, judge, latency scores; latency values
  has(html, "Judge reasoning for case 7: accurate=true, complete.");
  has(html, "judge_answer_invalid: the judge&#39;s answer is not JSON");
  has(html, "upstream 503 (×3)");
  assertEquals(html.match(/<details class="case"/g)?.length, 20);
  has(html, "Compared with eval_01BASE");
  like(html, /<th scope="row">case-1<\/th><td>0\.90<\/td><td>0\.40<\/td><td>−0\.50<\/td>/);
  has(html, "$0.021");
});

Deno.test("eval report: the Markdown has the same aggregates, text charts and drill-down", () => {
  const md = evalReportMarkdown(withBaseline(sampleEvalRun()));
  assert(md.startsWith("<!-- stn eval report -->\n# Eval report: Capitals"));
  has(md, "| judge | 19 | 1 | 0.52 | 0.55 | 0.85 | 30.0% | – | – |");
  has(md, "| latency | 20 | 0 | 1.00 | 1.00 | 1.00 | 100% | 732 ms | 1030 ms |");
  has(md, "| __geocode | 3 | 0 | 3 | 0% | upstream 503 (×3) |");
  has(md, "### case-5 — error, score 0.50");
  has(md, "| judge | – | no | – | judge_answer_invalid: the judge's answer is not JSON |");
  has(md, "Tool calls: `__lookup` completed, `__geocode` failed (upstream 503).");
  has(md, "Cases that got worse: case-1.");
  like(md, /0\.9–1 █{20} 15/);
});

Deno.test("stn eval report: writes HTML or Markdown from an eval run file; never overwrites a file it did not write", async () => {
  const home = await tempHome();
  try {
    const env = { STATION_HOME: home.home };
    const file = join(home.home, "eval.json");
    await Deno.writeTextFile(file, JSON.stringify(sampleEvalRun()));
    const html = join(home.home, "report.html");
    const r = await runStn(["eval", "report", file, "-o", html], { env });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, `wrote the html report of eval_01SAMPLE (20 case(s)) to ${html}`);
    assert((await Deno.readTextFile(html)).includes('<meta name="generator" content="stn eval report">'));
    // Its own report it overwrites; --format wins over the extension.
    const again = await runStn(["eval", "report", file, "-o", html, "--format", "md"], { env });
    assertEquals(again.code, 0, again.stderr);
    assert((await Deno.readTextFile(html)).startsWith("<!-- stn eval report -->"));

    const mine = join(home.home, "notes.md");
    await Deno.writeTextFile(mine, "my notes\n");
    const refused = await runStn(["eval", "report", file, "-o", mine], { env });
    assertEquals(refused.code, 2);
    assertStringIncludes(refused.stderr, "is not a report stn wrote; stn does not overwrite it");
    assertEquals(await Deno.readTextFile(mine), "my notes\n");

    const txt = await runStn(["eval", "report", file, "-o", join(home.home, "r.txt")], { env });
    assertEquals(txt.code, 2);
    assertStringIncludes(txt.stderr, "neither HTML nor Markdown");
    await Deno.writeTextFile(join(home.home, "bad.json"), "{not json");
    const bad = await runStn(["eval", "report", join(home.home, "bad.json"), "-o", html], { env });
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "not a JSON eval run");
    assertEquals(bad.stderr.includes("    at "), false);
  } finally {
    await home.cleanup();
  }
});
