/**
 * The deterministic scorers (docs/evals.md#scorers): `expected` (a value, a substring or JSONata), `schema`
 * (the agent's output schema), `tools` (required/forbidden tools, call counts), `latency` and `tokens`; and
 * which scorers a dataset runs. The judge is in judge.ts.
 */

import { isDeepStrictEqual } from "node:util";
import type { EvalCaseInput, EvalDataset, EvalScore, EvalScorerName } from "../contract/evals.ts";
import { errorMessage, StationError } from "../errors.ts";
import { evaluate } from "../workflows/expr.ts";
import { schemaViolation } from "../workflows/json_schema.ts";

/** A tool call of a case's run, as the scorers see it. */
export interface ObservedToolCall {
  name: string;
  status: "running" | "completed" | "failed";
  error: string | null;
  arguments: unknown;
}

/** What a case's run showed: what the scorers score. */
export interface Observed {
  runId: string;
  /** The run ended `completed`. */
  completed: boolean;
  answer: string | null;
  result: unknown;
  error: { code: string; message: string } | null;
  totalTokens: number;
  /** What its agent runs' model calls cost (USD, docs/agents.md#cost); null when a model has no price. */
  costUsd: number | null;
  durationMs: number | null;
  toolCalls: ObservedToolCall[];
  /** The agent's output schema (agents only). */
  outputSchema?: Record<string, unknown>;
}

/** A score with the fields a scorer leaves out filled in. */
export function score(s: Partial<EvalScore> & { scorer: string; passed: boolean }): EvalScore {
  return { score: null, value: null, reasoning: null, error: null, judge: null, ...s };
}

/** The scorers a dataset runs: its `scorers`, else those its cases give data for. */
export function scorersOf(dataset: EvalDataset, hasOutputSchema: boolean): EvalScorerName[] {
  if (dataset.scorers) return dataset.scorers;
  const any = (f: (c: EvalCaseInput) => unknown) => dataset.cases.some(f);
  const out: EvalScorerName[] = [];
  if (any((c) => c.expected !== undefined)) out.push("expected");
  if (hasOutputSchema) out.push("schema");
  if (dataset.tools || any((c) => c.tools)) out.push("tools");
  if (dataset.judge?.rubric || any((c) => c.rubric)) out.push("judge");
  out.push("latency", "tokens");
  return out;
}

function parsedAnswer(o: Observed): unknown {
  if (o.result !== undefined && o.result !== null) return o.result;
  try {
    return JSON.parse(o.answer ?? "");
  } catch {
    return o.answer;
  }
}

/** `expected`: the answer equals a value, contains a text, or satisfies a JSONata expression. */
export async function scoreExpected(c: EvalCaseInput, o: Observed): Promise<EvalScore> {
  const expected = c.expected;
  if (expected === undefined) {
    return score({ scorer: "expected", passed: true, reasoning: "no expected value" });
  }
  if (!o.completed) {
    return score({
      scorer: "expected",
      score: 0,
      passed: false,
      reasoning: "no answer: the run did not complete",
    });
  }
  const answer = o.answer ?? "";
  const verdict = (ok: boolean, why: string) =>
    score({ scorer: "expected", score: ok ? 1 : 0, passed: ok, reasoning: ok ? null : why });
  if (expected && typeof expected === "object" && "contains" in expected) {
    const text = String(expected.contains);
    return verdict(answer.includes(text), `the answer does not contain ${JSON.stringify(text)}`);
  }
  if (expected && typeof expected === "object" && "jsonata" in expected) {
    const src = String(expected.jsonata);
    try {
      const v = await evaluate(src, {
        answer,
        result: parsedAnswer(o),
        vars: c.vars ?? {},
        tool_calls: o.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments, status: t.status })),
      });
      if (typeof v === "number" && v >= 0 && v <= 1) {
        return score({ scorer: "expected", score: v, passed: v >= 0.5, reasoning: `${src} gave ${v}` });
      }
      return verdict(Array.isArray(v) ? v.some(Boolean) : Boolean(v), `${src} is false for the answer`);
    } catch (err) {
      const e = err instanceof StationError ? err : undefined;
      return score({
        scorer: "expected",
        passed: false,
        error: { code: e?.code ?? "expression_failed", message: errorMessage(err) },
      });
    }
  }
  if (typeof expected === "string") {
    return verdict(answer.trim() === expected.trim(), `the answer is not ${JSON.stringify(expected)}`);
  }
  return verdict(
    isDeepStrictEqual(parsedAnswer(o), expected),
    "the answer does not equal the expected value",
  );
}

/** `schema`: the answer matches the agent's output schema. */
export function scoreSchema(o: Observed): EvalScore {
  if (!o.outputSchema) return score({ scorer: "schema", passed: true, reasoning: "no output schema" });
  const problem = o.completed && o.result !== undefined && o.result !== null
    ? schemaViolation(o.outputSchema, structuredClone(o.result))
    : o.error?.message ?? "no structured answer";
  return score({ scorer: "schema", score: problem ? 0 : 1, passed: !problem, reasoning: problem });
}

/** `tools`: each required tool called, no forbidden one, the call count in bounds; the share of checks met. */
export function scoreTools(c: EvalCaseInput, dataset: EvalDataset, o: Observed): EvalScore {
  const want = c.tools ?? dataset.tools ?? {};
  const called = new Set(o.toolCalls.map((t) => t.name));
  const checks: Array<[boolean, string]> = [
    ...(want.required ?? []).map((t): [boolean, string] => [called.has(t), `${t} was not called`]),
    ...(want.forbidden ?? []).map((t): [boolean, string] => [!called.has(t), `${t} was called (forbidden)`]),
  ];
  const n = o.toolCalls.length;
  if (want.min_calls !== undefined) checks.push([n >= want.min_calls, `${n} tool calls < ${want.min_calls}`]);
  if (want.max_calls !== undefined) checks.push([n <= want.max_calls, `${n} tool calls > ${want.max_calls}`]);
  if (checks.length === 0) {
    return score({ scorer: "tools", passed: true, value: n, reasoning: "no expectations" });
  }
  const met = checks.filter(([ok]) => ok).length;
  const failed = checks.filter(([ok]) => !ok).map(([, why]) => why);
  return score({
    scorer: "tools",
    score: met / checks.length,
    passed: failed.length === 0,
    value: n,
    reasoning: failed.length ? failed.join("; ") : null,
  });
}

/** `latency` / `tokens`: the measured value, and against a threshold when one is set. */
export function scoreMeasure(
  scorer: "latency" | "tokens",
  value: number | null,
  max: number | undefined,
): EvalScore {
  if (max === undefined || value === null) return score({ scorer, passed: true, value });
  const ok = value <= max;
  return score({ scorer, score: ok ? 1 : 0, passed: ok, value, reasoning: ok ? null : `${value} > ${max}` });
}
