/**
 * Generated answers (docs/faker.md#generated-answers): the configured model writes a tool's answer as JSON
 * matching the answer's shape; an answer that does not match is sent back once with what is wrong.
 */

import { generateText, type ModelMessage } from "ai";
import type { ResolvedModel } from "../agents/providers.ts";
import { schemaIssues } from "../agents/tool_input.ts";
import { errorMessage, StationError } from "../errors.ts";
import type { FakerCall, FakerTool } from "./session.ts";
import type { AnswerShape } from "./shape.ts";

/** Earlier calls a prompt shows, so generated data stays consistent within a session. */
const HISTORY = 3;
/** Characters of an example or an earlier answer a prompt shows. */
const EXAMPLE_CHARS = 4000;

/** What to generate. */
export interface GenerateRequest {
  tool: FakerTool;
  args: Record<string, unknown>;
  shape: AnswerShape;
  instruction?: string;
  /** The session's calls so far. */
  history: FakerCall[];
  /** Why the real server gave no answer, when it did not. */
  realError?: string;
  signal?: AbortSignal;
}

/** A generated value and what producing it cost. */
export interface Generated {
  value: unknown;
  model: string;
  input_tokens: number;
  output_tokens: number;
}

const SYSTEM =
  "You write realistic data for the answer of a tool of an MCP server, so AI agents can be tested " +
  "without production systems. Answer with JSON only: one value matching the JSON Schema you are given, " +
  "no prose, no code fences. Invent plausible, varied values; never copy an example's values.";

function clip(text: string): string {
  return text.length > EXAMPLE_CHARS ? `${text.slice(0, EXAMPLE_CHARS)}… (cut)` : text;
}

/** The prompt of one generation. */
export function generationPrompt(r: GenerateRequest): string {
  const parts = [
    `Tool: ${r.tool.name}`,
    r.tool.description && `What it does: ${r.tool.description}`,
    `Called with: ${JSON.stringify(r.args)}`,
    r.instruction && `Instruction: ${r.instruction}`,
    `The answer must match this JSON Schema:\n${JSON.stringify(r.shape.schema)}`,
    r.shape.example !== undefined &&
    `The real server answered with this shape (make new values):\n${clip(JSON.stringify(r.shape.example))}`,
    r.realError && `The real server gave no answer (${clip(r.realError)}); answer as if the call succeeded.`,
  ];
  const earlier = r.history.slice(-HISTORY);
  if (earlier.length) {
    parts.push(
      "Earlier calls in this session (stay consistent with them):\n" +
        earlier.map((c) =>
          `- ${c.tool}(${JSON.stringify(c.args)}) → ${clip(JSON.stringify(c.answer.content))}`
        )
          .join("\n"),
    );
  }
  return parts.filter(Boolean).join("\n\n");
}

/** A model's answer without the code fences models put around JSON however they are asked. */
export function withoutFences(text: string): string {
  return text.trim().replace(/^```(?:json)?\s*\n?/, "").replace(/\n?```$/, "").trim();
}

/** The value of a model's answer, or what is wrong with it. */
function valueOf(text: string, shape: AnswerShape): { value: unknown } | { problem: string } {
  const body = withoutFences(text);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    value = err;
  }
  // A text answer may come as plain text rather than a JSON string ("42", or a sentence).
  if (shape.form === "text" && typeof value !== "string") {
    return body ? { value: body } : { problem: "the answer is empty" };
  }
  if (value instanceof Error) return { problem: `the answer is not JSON (${errorMessage(value)})` };
  const issues = schemaIssues(value, shape.schema);
  return issues.length
    ? { problem: `the answer does not match the schema: ${issues.join("; ")}` }
    : { value };
}

/**
 * Asks the model for a tool's answer. A reply that is not JSON matching the shape is answered once with
 * the problem; a second such reply (or a failed model call) is `faker_generation_failed`.
 */
export async function generateAnswer(model: ResolvedModel, r: GenerateRequest): Promise<Generated> {
  const messages: ModelMessage[] = [{ role: "user", content: generationPrompt(r) }];
  let input = 0;
  let output = 0;
  let problem = "";
  for (let attempt = 0; attempt < 2; attempt++) {
    let text: string;
    try {
      const reply = await generateText({
        model: model.model,
        system: SYSTEM,
        messages,
        abortSignal: r.signal,
      });
      input += reply.usage.inputTokens ?? 0;
      output += reply.usage.outputTokens ?? 0;
      text = reply.text;
    } catch (err) {
      throw new StationError(
        "faker_generation_failed",
        `generating ${r.tool.name}'s answer with ${model.id} failed: ${errorMessage(err)}`,
        { status: 502, hint: "check ai.* in config.yaml (or --ai-model) and that the provider answers" },
      );
    }
    const got = valueOf(text, r.shape);
    if ("value" in got) {
      return { value: got.value, model: model.id, input_tokens: input, output_tokens: output };
    }
    problem = got.problem;
    messages.push(
      { role: "assistant", content: text },
      { role: "user", content: `${problem}. Answer again with JSON only, matching the schema.` },
    );
  }
  throw new StationError(
    "faker_generation_failed",
    `${model.id} did not write a usable answer for ${r.tool.name}: ${problem}`,
    { status: 502, hint: "try another model (--ai-model) or a clearer --ai-instruction" },
  );
}
