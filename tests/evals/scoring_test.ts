import { aggregate, percentile } from "../../src/evals/aggregate.ts";
import { compareEvals } from "../../src/evals/compare.ts";
import { parseDataset } from "../../src/evals/dataset.ts";
import {
  type Observed,
  scoreExpected,
  scoreMeasure,
  scorersOf,
  scoreSchema,
  scoreTools,
} from "../../src/evals/scorers.ts";
import type { EvalCaseResult, EvalScore } from "../../src/contract/evals.ts";
import { StationError } from "../../src/errors.ts";
import { assertEquals, assertThrows } from "../helpers/assert.ts";

const observed = (o: Partial<Observed> = {}): Observed => ({
  runId: "arun_1",
  completed: true,
  answer: "answer 4",
  result: undefined,
  error: null,
  totalTokens: 100,
  costUsd: null,
  durationMs: 250,
  toolCalls: [],
  ...o,
});

Deno.test("evals: a JSONL dataset's problems are named by line; YAML takes settings; ids are unique", () => {
  const ok = parseDataset('{"task": "a"}\n\n{"id": "b", "task": "b", "expected": 1}\n', "qa.jsonl");
  assertEquals([ok.name, ok.cases.map((c) => c.id)], ["qa", ["case-1", "b"]]);
  const bad = assertThrows(
    () => parseDataset('{"task": "a"}\n{"task": 3}\nnot json\n', "qa.jsonl"),
    StationError,
  ) as StationError;
  assertEquals(bad.code, "eval_dataset_invalid");
  assertEquals(
    (bad.details as { issues: { line: number }[] }).issues.map((i) => i.line),
    [2, 3],
  );
  const noTask = assertThrows(() => parseDataset('{"expected": 1}\n', "qa.jsonl"), StationError);
  assertEquals(noTask.message, "dataset qa.jsonl: line 1: a case needs task or input");
  const yaml = parseDataset("name: s\njudge: {rubric: r}\ncases:\n  - {task: a}\n", "s.yaml");
  assertEquals([yaml.name, yaml.judge?.pass_score, yaml.cases[0].id], ["s", 0.7, "case-1"]);
  assertThrows(
    () => parseDataset('{"id": "x", "task": "a"}\n{"id": "x", "task": "b"}\n', "d.jsonl"),
    StationError,
  );
  assertThrows(() => parseDataset("cases: []\n", "d.yaml"), StationError);
});

Deno.test("evals: the scorers a dataset runs by default, and what each gives", async () => {
  const ds = parseDataset('{"task": "a", "expected": "x", "rubric": "r"}\n', "d.jsonl");
  assertEquals(scorersOf(ds, true), ["expected", "schema", "judge", "latency", "tokens"]);
  assertEquals(scorersOf({ ...ds, scorers: ["tokens"] }, true), ["tokens"]);

  const exact = await scoreExpected({ task: "t", expected: " answer 4 " }, observed());
  assertEquals([exact.score, exact.passed], [1, true]);
  const wrong = await scoreExpected({ task: "t", expected: "answer 5" }, observed());
  assertEquals([wrong.score, wrong.reasoning], [0, 'the answer is not "answer 5"']);
  const contains = await scoreExpected({ task: "t", expected: { contains: "4" } }, observed());
  assertEquals(contains.passed, true);
  const value = await scoreExpected({ task: "t", expected: { n: 4 } }, observed({ answer: '{"n": 4}' }));
  assertEquals(value.passed, true);
  const partial = await scoreExpected({ task: "t", expected: { jsonata: "0.25" } }, observed());
  assertEquals([partial.score, partial.passed], [0.25, false]);
  const jsonata = await scoreExpected(
    { task: "t", vars: { n: 4 }, expected: { jsonata: "$contains(answer, $string(vars.n))" } },
    observed(),
  );
  assertEquals(jsonata.passed, true);
  const broken = await scoreExpected({ task: "t", expected: { jsonata: "$nope(" } }, observed());
  assertEquals([broken.passed, broken.error?.code !== undefined], [false, true]);
  const failedRun = await scoreExpected({ task: "t", expected: "x" }, observed({ completed: false }));
  assertEquals(failedRun.score, 0);

  const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
  assertEquals(scoreSchema(observed({ outputSchema: schema, result: { n: 1 } })).passed, true);
  assertEquals(scoreSchema(observed({ outputSchema: schema, result: { m: 1 } })).score, 0);

  const calls = [{ name: "a", status: "completed" as const, error: null, arguments: {} }, {
    name: "b",
    status: "failed" as const,
    error: "boom",
    arguments: {},
  }];
  const tools = scoreTools(
    { task: "t", tools: { required: ["a", "c"], forbidden: ["b"], max_calls: 5 } },
    { cases: [] } as never,
    observed({ toolCalls: calls }),
  );
  assertEquals([tools.score, tools.passed, tools.value], [0.5, false, 2]);
  assertEquals(tools.reasoning, "c was not called; b was called (forbidden)");

  assertEquals(scoreMeasure("latency", 250, undefined), {
    scorer: "latency",
    score: null,
    passed: true,
    value: 250,
    reasoning: null,
    error: null,
    judge: null,
  });
  assertEquals([scoreMeasure("tokens", 100, 50).score, scoreMeasure("tokens", 100, 50).reasoning], [
    0,
    "100 > 50",
  ]);
});

const s = (scorer: string, score: number | null, passed = true, value: number | null = null): EvalScore => ({
  scorer,
  score,
  passed,
  value,
  reasoning: null,
  error: null,
  judge: null,
});

function result(id: string, scores: EvalScore[], tools: EvalCaseResult["tool_calls"] = []): EvalCaseResult {
  const numbers = scores.flatMap((x) => x.score ?? []);
  return {
    eval_id: "e",
    index: 0,
    repeat: 0,
    case_id: id,
    task: "t",
    input: null,
    vars: {},
    rubric: null,
    status: scores.every((x) => x.passed) ? "passed" : "failed",
    run_id: "arun",
    answer: "",
    error: null,
    scores,
    score: numbers.length ? numbers.reduce((a, b) => a + b, 0) / numbers.length : null,
    total_tokens: 0,
    cost_usd: null,
    duration_ms: 1,
    tool_calls: tools,
    started_at: null,
    ended_at: null,
  };
}

Deno.test("evals: aggregates per scorer (mean, p50, p90, pass rate, values) and tool effectiveness", () => {
  assertEquals([
    percentile([], 50),
    percentile([3, 1, 2], 50),
    percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90),
  ], [
    null,
    2,
    9,
  ]);
  const a = aggregate([
    result("a", [s("judge", 1), s("latency", null, true, 100)], [{
      name: "t",
      status: "completed",
      error: null,
    }]),
    result("b", [s("judge", 0.5, false), s("latency", null, true, 300)], [{
      name: "t",
      status: "failed",
      error: "x",
    }]),
    result("c", [s("judge", 0.75), s("latency", null, true, 200)], [{
      name: "t",
      status: "failed",
      error: "x",
    }]),
  ]);
  assertEquals([a.cases, a.passed, a.failed], [3, 2, 1]);
  const judge = a.scorers.find((x) => x.scorer === "judge")!;
  assertEquals([judge.mean, judge.p50, judge.p90, judge.pass_rate], [0.75, 0.75, 1, 2 / 3]);
  const latency = a.scorers.find((x) => x.scorer === "latency")!;
  assertEquals([latency.mean, latency.value_mean, latency.value_p50], [null, 200, 200]);
  assertEquals(a.tools, [{
    tool: "t",
    calls: 3,
    succeeded: 1,
    failed: 2,
    success_rate: 1 / 3,
    errors: [{ message: "x", count: 2 }],
  }]);
});

Deno.test("evals: compare names the cases that got worse; a drop equal to the threshold is not a regression", () => {
  const base = [result("a", [s("x", 1)]), result("b", [s("x", 1)]), result("gone", [s("x", 1)])];
  const head = [result("a", [s("x", 0.95)]), result("b", [s("x", 0, false)]), result("new", [s("x", 1)])];
  const c = compareEvals(
    { eval_id: "A", aggregates: aggregate(base), cases: base },
    { eval_id: "B", aggregates: aggregate(head), cases: head },
    0.05,
  );
  assertEquals([c.regressed, c.regressed_cases, c.only_in_base, c.only_in_head], [true, ["b"], ["gone"], [
    "new",
  ]]);
  assertEquals(c.cases.find((x) => x.case_id === "a")!.regressed, false);
  const same = compareEvals(
    { eval_id: "A", aggregates: aggregate(base), cases: base },
    { eval_id: "A", aggregates: aggregate(base), cases: base },
    0,
  );
  assertEquals([same.regressed, same.regressed_cases], [false, []]);
});
