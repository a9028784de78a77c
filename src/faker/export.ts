/**
 * A faker session as a `stn mock` spec (docs/faker.md#export): every tool it served, each answering with the
 * session's answers in call order, so a faked session becomes a deterministic test double.
 */

import { isDeepStrictEqual } from "node:util";
import { stringify } from "yaml";
import type { ToolAnswer } from "../testing/mocks.ts";
import { parseMockSpec } from "../testing/mock_spec.ts";
import type { FakerResult, FakerSession } from "./session.ts";
import { resultText } from "./shape.ts";

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A recorded answer as a spec answer: a failure as `error`, structured content whose JSON the text is as
 * that object, anything else as its text exactly (binary blocks are left out).
 */
function specAnswer(r: FakerResult): ToolAnswer {
  const text = resultText(r);
  if (r.is_error) return { error: text || "the tool failed without a message" };
  if (r.structured_content && isDeepStrictEqual(parseJson(text), r.structured_content)) {
    return { result: r.structured_content };
  }
  return { result: text };
}

/** A JSON Schema without its `$schema` (a server's may name draft-07; `stn mock` checks 2020-12 keywords). */
function withoutDraft(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _draft, ...rest } = schema;
  return rest;
}

/**
 * The spec of a session: a tool called once answers what it answered; one called more often answers its
 * answers as a `sequence` (the last repeats); one never called fails saying so. Checked by the same parser
 * `stn mock` reads specs with.
 */
export function sessionSpec(session: FakerSession): string {
  const tools: Record<string, Record<string, unknown>> = {};
  for (const t of session.tools) {
    const answers = session.calls.filter((c) => c.tool === t.name && c.source !== "refused")
      .map((c) => specAnswer(c.answer));
    const answer = answers.length === 0
      ? { error: `${t.name} was not called in faker session ${session.id}` }
      : answers.length === 1
      ? answers[0]
      : { sequence: answers };
    tools[t.name] = { description: t.description, input_schema: withoutDraft(t.input_schema), ...answer };
  }
  const text =
    `# stn mock spec of faker session ${session.id} (${session.mode}, ${session.calls.length} call${
      session.calls.length === 1 ? "" : "s"
    })\n` +
    stringify({ name: session.name, tools }, { lineWidth: 0, aliasDuplicateObjects: false });
  parseMockSpec(text, `${session.id}.yaml`);
  return text;
}
