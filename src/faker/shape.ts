/**
 * The shape of a tool's answer (docs/faker.md#generated-answers): the JSON Schema generated data must match,
 * and how a generated value becomes a result that reads like the real server's.
 */

import type { FakerResult, FakerTool } from "./session.ts";

/** What generated data must look like, and how it is sent. */
export interface AnswerShape {
  /** The JSON Schema the generated value must match. */
  schema: Record<string, unknown>;
  /**
   * structured: the tool declares an output schema (the value is the structured content); json: the real
   * answer's text is JSON (the value is that JSON); text: anything else (the value is the text).
   */
  form: "structured" | "json" | "text";
  /** structured: the string field whose value the real server also sent as its text block. */
  textField?: string;
  /** json: the indentation of the real answer's JSON text. */
  indent?: number;
  /** The real answer's value, as an example of the shape (never to be copied). */
  example?: unknown;
}

/** The text blocks of a result, joined. */
export function resultText(result: FakerResult): string {
  return result.content.filter((b) => b.type === "text").map((b) => String(b.text ?? "")).join("\n");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON Schema describing a value's shape: its types, every object key required, arrays by their first item. */
export function inferSchema(value: unknown): Record<string, unknown> {
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) {
    return value.length ? { type: "array", items: inferSchema(value[0]) } : { type: "array" };
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    return {
      type: "object",
      properties: Object.fromEntries(entries.map(([k, v]) => [k, inferSchema(v)])),
      required: entries.map(([k]) => k),
    };
  }
  return { type: typeof value === "number" ? "number" : typeof value };
}

/**
 * The shape of a tool's answer: its declared output schema, else the shape of the real answer's JSON,
 * else text. `real` is the real server's successful answer, when there is one.
 */
export function answerShape(tool: FakerTool, real?: FakerResult): AnswerShape {
  const ok = real && !real.is_error ? real : undefined;
  const text = ok ? resultText(ok) : undefined;
  if (tool.output_schema) {
    const structured = ok?.structured_content;
    const textField = structured && Object.keys(structured).find((k) => structured[k] === text);
    return { schema: tool.output_schema, form: "structured", textField, example: structured };
  }
  const json = text === undefined ? undefined : parseJson(text);
  if (json !== null && typeof json === "object") {
    return { schema: inferSchema(json), form: "json", indent: text!.includes("\n") ? 2 : 0, example: json };
  }
  return { schema: { type: "string" }, form: "text", example: text };
}

/** A generated value as the result the client gets, in the form of the real server's answers. */
export function resultOf(shape: AnswerShape, value: unknown): FakerResult {
  const text = (t: string): FakerResult["content"] => [{ type: "text", text: t }];
  if (shape.form === "structured") {
    const structured = value as Record<string, unknown>;
    const mirrored = shape.textField !== undefined ? structured[shape.textField] : undefined;
    return {
      content: text(typeof mirrored === "string" ? mirrored : JSON.stringify(structured)),
      structured_content: structured,
    };
  }
  if (shape.form === "json") return { content: text(JSON.stringify(value, null, shape.indent)) };
  return { content: text(String(value)) };
}
