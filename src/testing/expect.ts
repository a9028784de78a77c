/** A case's `expect:` checked against what its run did: each failing assertion with a message and a diff. */

import type { TestExpect } from "../contract/tests.ts";
import { errorMessage } from "../errors.ts";
import { evaluate } from "../workflows/expr.ts";
import { lineDiff } from "./diff.ts";

/** What a case's run did, as the assertions read it. */
export interface Observed {
  status: string;
  output: unknown;
  error: { code: string; message: string } | null;
  /** The step ids the run took, in order (workflow cases). */
  steps: string[];
  /** Every tool call of the run (and of a workflow's agent steps). */
  toolCalls: Array<{ name: string; arguments: unknown }>;
  turns: number;
  tokens: number;
}

/** One failed assertion. */
export interface Failure {
  assertion: string;
  message: string;
  diff?: string;
}

const show = (v: unknown) => JSON.stringify(v, null, 2) ?? "undefined";

/** True when two JSON values are equal (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object), kb = Object.keys(b as object);
  return ka.length === kb.length &&
    ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** JSONata truthiness of an expression over `data` (an error is a failure with its message). */
async function holds(expr: string, data: unknown): Promise<true | string> {
  try {
    const v = await evaluate(expr, data);
    return (Array.isArray(v) ? v.some(Boolean) : Boolean(v)) ? true : `was ${show(v)}`;
  } catch (err) {
    return errorMessage(err);
  }
}

/** The output assertion: a string is JSONata that must be true over the output, anything else must equal it. */
async function checkOutput(expected: unknown, output: unknown): Promise<Failure | undefined> {
  if (typeof expected === "string") {
    const r = await holds(expected, output);
    if (r === true) return;
    return { assertion: "output", message: `${expected} is not true (${r})`, diff: show(output) };
  }
  if (jsonEqual(expected, output)) return;
  return {
    assertion: "output",
    message: "the output differs",
    diff: lineDiff(show(expected).split("\n"), show(output).split("\n"), 3).join("\n"),
  };
}

/** The steps assertion: the exact path in order, or states that must (not) be visited. */
function checkSteps(expected: NonNullable<TestExpect["steps"]>, steps: string[]): Failure[] {
  if (Array.isArray(expected)) {
    if (jsonEqual(expected, steps)) return [];
    return [{
      assertion: "steps",
      message: "the run took another path",
      diff: lineDiff(expected, steps, 100).join("\n"),
    }];
  }
  const seen = new Set(steps);
  const missing = (expected.visited ?? []).filter((s) => !seen.has(s));
  const extra = (expected.not_visited ?? []).filter((s) => seen.has(s));
  const out: Failure[] = [];
  if (missing.length) {
    out.push({
      assertion: "steps.visited",
      message: `not visited: ${missing.join(", ")} (took ${steps.join(" → ")})`,
    });
  }
  if (extra.length) {
    out.push({
      assertion: "steps.not_visited",
      message: `visited: ${extra.join(", ")} (took ${steps.join(" → ")})`,
    });
  }
  return out;
}

/** The tool_calls assertion: calls of that name whose args satisfy the JSONata, counted. */
async function checkToolCalls(
  expected: NonNullable<TestExpect["tool_calls"]>,
  calls: Observed["toolCalls"],
): Promise<Failure[]> {
  const out: Failure[] = [];
  for (const e of expected) {
    let n = 0;
    for (const c of calls.filter((c) => c.name === e.name)) {
      if (!e.args || (await holds(e.args, c.arguments)) === true) n++;
    }
    const ok = e.count === undefined ? n > 0 : n === e.count;
    if (ok) continue;
    const want = e.count === undefined ? "at least one call" : `${e.count} call(s)`;
    out.push({
      assertion: `tool_calls.${e.name}`,
      message: `expected ${want} of ${e.name}${e.args ? ` with ${e.args}` : ""}, saw ${n}`,
      diff: calls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`).join("\n") || "(no tool calls)",
    });
  }
  return out;
}

/** Every assertion of `expect` that does not hold for `seen` (none: the case passed). */
export async function checkExpect(expect: TestExpect, seen: Observed): Promise<Failure[]> {
  const failures: Failure[] = [];
  const status = expect.status ?? (expect.error ? "failed" : "completed");
  if (seen.status !== status) {
    // A drift error carries its diff after its first line: shown as the failure's diff.
    const [first, ...rest] = seen.error?.message.split("\n") ?? [];
    const why = seen.error ? `: ${seen.error.code}: ${first}` : "";
    const diff = rest.length ? rest.join("\n") : undefined;
    failures.push({ assertion: "status", message: `expected ${status}, got ${seen.status}${why}`, diff });
  }
  if (expect.error && seen.error?.code !== expect.error.code) {
    failures.push({
      assertion: "error",
      message: `expected error ${expect.error.code}, got ${seen.error ? seen.error.code : "no error"}`,
    });
  }
  if (expect.output !== undefined) {
    const f = await checkOutput(expect.output, seen.output);
    if (f) failures.push(f);
  }
  if (expect.steps) failures.push(...checkSteps(expect.steps, seen.steps));
  if (expect.tool_calls) failures.push(...await checkToolCalls(expect.tool_calls, seen.toolCalls));
  if (expect.max_turns !== undefined && seen.turns > expect.max_turns) {
    failures.push({
      assertion: "max_turns",
      message: `took ${seen.turns} turns, at most ${expect.max_turns}`,
    });
  }
  if (expect.max_tokens !== undefined && seen.tokens > expect.max_tokens) {
    failures.push({
      assertion: "max_tokens",
      message: `used ${seen.tokens} tokens, at most ${expect.max_tokens}`,
    });
  }
  return failures;
}
