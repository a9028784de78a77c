import { EvalRun } from "../../src/contract/evals.ts";

/**
 * An ended eval run as the evals API answers it (checked against the contract): `n` cases of an agent with a
 * judge, an expected-answer scorer, latency, tool calls (some failing) and costs. Case `case-3`'s answer holds
 * markup, so a report must escape it; case `case-5`'s judge answer was malformed (a scored error).
 */
export function sampleEvalRun(n = 20, id = "eval_01SAMPLE"): EvalRun {
  const cases = Array.from({ length: n }, (_, i) => {
    const judge = (i * 7 % 10) / 10 + 0.05;
    const broken = i === 5;
    const expectedOk = i % 4 !== 1;
    const toolFails = i % 6 === 2;
    const scores = [
      {
        scorer: "expected",
        score: expectedOk ? 1 : 0,
        passed: expectedOk,
        value: null,
        reasoning: expectedOk ? "the answer equals the expected value" : `expected "Paris", got "Lyon"`,
        error: null,
        judge: null,
      },
      {
        scorer: "judge",
        score: broken ? null : judge,
        passed: !broken && judge >= 0.7,
        value: null,
        reasoning: broken ? null : `Judge reasoning for case ${i}: accurate=${judge >= 0.5}, complete.`,
        error: broken ? { code: "judge_answer_invalid", message: "the judge's answer is not JSON" } : null,
        judge: {
          model: "openai/judge-model",
          input_tokens: 200,
          output_tokens: 40,
          total_tokens: 240,
          answer: broken ? "I think it's fine" : `{"score": ${judge}, "reasoning": "…"}`,
        },
      },
      {
        scorer: "latency",
        score: 1,
        passed: true,
        value: 400 + i * 35,
        reasoning: null,
        error: null,
        judge: null,
      },
    ];
    const passed = scores.every((s) => s.passed);
    return {
      eval_id: id,
      index: i,
      repeat: 0,
      case_id: `case-${i}`,
      task: `What is the capital of country #${i}?`,
      input: null,
      vars: i % 3 === 0 ? { region: "EU" } : {},
      expected: "Paris",
      rubric: "Correct, concise, names the city.",
      status: broken ? "error" : passed ? "passed" : "failed",
      run_id: `arun_0SAMPLE${String(i).padStart(2, "0")}`,
      answer: i === 3 ? "<script>alert('x')</script> Paris" : expectedOk ? "Paris" : "Lyon",
      error: null,
      scores,
      score: broken ? 0.5 : ((expectedOk ? 1 : 0) + judge + 1) / 3,
      total_tokens: 120 + i,
      cost_usd: 0.0001 * (i + 1),
      duration_ms: 400 + i * 35,
      tool_calls: [
        { name: "__lookup", status: "completed", error: null },
        ...(toolFails ? [{ name: "__geocode", status: "failed", error: "upstream 503" }] : []),
      ],
      started_at: "2026-11-26T10:00:00.000Z",
      ended_at: "2026-11-26T10:00:01.000Z",
    };
  });
  const judged = cases.flatMap((c) => c.scores.filter((s) => s.scorer === "judge" && s.score !== null));
  const geocodeFails = cases.filter((c) => c.tool_calls.length > 1).length;
  return EvalRun.parse({
    eval_id: id,
    kind: "agent",
    target: "Capitals",
    environment: "default",
    dataset: { name: "capitals.jsonl", path: "environments/default/evals/capitals.jsonl", cases: n },
    model: null,
    judge_model: "openai/judge-model",
    concurrency: 5,
    repeat: 1,
    status: "completed",
    error: null,
    cases_total: n,
    cases_done: n,
    total_tokens: cases.reduce((t, c) => t + c.total_tokens, 0),
    cost_usd: cases.reduce((t, c) => t + c.cost_usd, 0),
    aggregates: {
      cases: n,
      passed: cases.filter((c) => c.status === "passed").length,
      failed: cases.filter((c) => c.status === "failed").length,
      errors: cases.filter((c) => c.status === "error").length,
      pass_rate: cases.filter((c) => c.status === "passed").length / n,
      mean_score: 0.71,
      scorers: [
        {
          scorer: "expected",
          count: n,
          errors: 0,
          mean: 0.75,
          p50: 1,
          p90: 1,
          pass_rate: 0.75,
          value_mean: null,
          value_p50: null,
          value_p90: null,
        },
        {
          scorer: "judge",
          count: judged.length,
          errors: n - judged.length,
          mean: 0.52,
          p50: 0.55,
          p90: 0.85,
          pass_rate: 0.3,
          value_mean: null,
          value_p50: null,
          value_p90: null,
        },
        {
          scorer: "latency",
          count: n,
          errors: 0,
          mean: 1,
          p50: 1,
          p90: 1,
          pass_rate: 1,
          value_mean: 732,
          value_p50: 732,
          value_p90: 1030,
        },
      ],
      tools: [
        {
          tool: "__lookup",
          calls: n,
          succeeded: n,
          failed: 0,
          success_rate: 1,
          errors: [],
        },
        {
          tool: "__geocode",
          calls: geocodeFails,
          succeeded: 0,
          failed: geocodeFails,
          success_rate: 0,
          errors: [{ message: "upstream 503", count: geocodeFails }],
        },
      ],
    },
    baseline: null,
    created_at: "2026-11-26T10:00:00.000Z",
    ended_at: "2026-11-26T10:00:09.000Z",
    duration_ms: 9000,
    cases,
  });
}
