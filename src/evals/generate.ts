/**
 * `stn eval generate` (docs/evals.md#generating-a-dataset): the configured model writes test cases from an
 * agent's prompt, tools, input and output schemas, by strategy; they come back to be reviewed and saved as a
 * file, never run blind.
 */

import type { AgentDefinition } from "../contract/agent_definition.ts";
import { EvalCaseInput, type GeneratedDataset } from "../contract/evals.ts";
import type { Models } from "../agents/providers.ts";
import { StationError } from "../errors.ts";
import { askModel, jsonInAnswer } from "./model_call.ts";

/** What each strategy asks for. */
const STRATEGIES: Record<GeneratedDataset["strategy"], string> = {
  common: "typical requests a user of this agent makes every day, each with a clear right answer",
  edge_cases:
    "edge cases: ambiguous, incomplete, contradictory or unusual requests, boundary values, requests the agent " +
    "should refuse or ask about",
  comprehensive: "a spread: mostly typical requests, then edge cases, then requests that should fail safely",
};

const SYSTEM = `You write evaluation datasets for AI agents.
Answer with only a JSON array, no other text. Each item is one test case:
{"id": "<short-kebab-id>", "task": "<what a user asks the agent>", "vars": {<the agent's input variables, if it has any>},
 "expected": <optional: the exact answer, only when there is exactly one>, "rubric": "<how a judge should score the answer>",
 "tools": {"required": ["<tool names the agent must call>"], "forbidden": []}  (optional)}`;

/** The prompt describing the agent to the model. */
export function generatePrompt(
  def: AgentDefinition,
  count: number,
  strategy: GeneratedDataset["strategy"],
): string {
  const parts = [
    `Write ${count} test cases for the agent "${def.name}"${def.description ? ` (${def.description})` : ""}.`,
    `Strategy: ${STRATEGIES[strategy]}.`,
    `The agent's prompt file:\n${def.source}`,
  ];
  if (def.tools.length) parts.push(`Its tools: ${def.tools.join(", ")}`);
  if (def.agents.length) parts.push(`Agents it can ask: ${def.agents.join(", ")}`);
  if (def.input_schema) parts.push(`Its input variables (JSON Schema): ${JSON.stringify(def.input_schema)}`);
  if (def.output_schema) {
    parts.push(`Its answer must match (JSON Schema): ${JSON.stringify(def.output_schema)}`);
  }
  return parts.join("\n\n");
}

/** Asks the model for `count` cases and keeps those that validate, each with a unique id. */
export async function generateDataset(
  models: Models,
  def: AgentDefinition,
  o: { count: number; strategy: GeneratedDataset["strategy"]; model?: string },
): Promise<GeneratedDataset> {
  const call = await askModel(models, {
    model: o.model,
    system: SYSTEM,
    prompt: generatePrompt(def, o.count, o.strategy),
    failure: "eval_generate_failed",
    caller: "eval:generate",
  });
  const value = jsonInAnswer(call.answer);
  const items = Array.isArray(value) ? value : (value as { cases?: unknown })?.cases;
  if (!Array.isArray(items)) {
    throw new StationError(
      "eval_generate_failed",
      `the model's answer is not a JSON list of cases: ${call.answer.slice(0, 200)}`,
      {
        hint: "run it again, or with a stronger model (--model)",
      },
    );
  }
  const ids = new Set<string>();
  const cases: EvalCaseInput[] = [];
  for (const item of items.slice(0, o.count)) {
    const parsed = EvalCaseInput.safeParse(item);
    if (!parsed.success) continue;
    let id = parsed.data.id && !ids.has(parsed.data.id)
      ? parsed.data.id
      : `${o.strategy}-${cases.length + 1}`;
    while (ids.has(id)) id += "-x";
    ids.add(id);
    cases.push({ ...parsed.data, id });
  }
  if (cases.length === 0) {
    throw new StationError("eval_generate_failed", "none of the cases the model wrote validates", {
      hint: "run it again, or with a stronger model (--model); docs/evals.md#datasets shows a case's fields",
    });
  }
  return {
    agent: def.name,
    environment: def.environment,
    strategy: o.strategy,
    model: call.model,
    cases,
    file_name: `${def.name}.${o.strategy}.jsonl`,
    total_tokens: call.total_tokens,
    skipped: Math.min(items.length, o.count) - cases.length,
  };
}
