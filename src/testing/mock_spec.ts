/** The `stn mock` spec file: the tools a mock MCP server serves and how each answers (a zod contract). */

import { basename, extname } from "node:path";
import { z } from "zod";
import { StationError } from "../errors.ts";
import { schemaProblem } from "../workflows/json_schema.ts";
import { parseCheck } from "../workflows/expr.ts";
import { parseSource, toPointer } from "../workflows/definition/source.ts";
import { ToolAnswerSchema } from "./mocks.ts";

/** How a mocked tool answers: exactly one of these — the forms of a test case's `mocks:` (mocks.ts). */
const Answer = {
  result: z.unknown().optional().describe(
    "the tool's output for every call: a string as it is, anything else as JSON",
  ),
  expr: z.string().min(1).optional().describe(
    "JSONata over the call's arguments (`$` and `$args`): the output",
  ),
  error: z.string().min(1).optional().describe("every call fails with this message (an MCP tool error)"),
  sequence: z.array(ToolAnswerSchema).min(1).optional().describe(
    "answers (result, expr or error) in call order; the last one repeats",
  ),
};
const ANSWER_KEYS = Object.keys(Answer) as (keyof typeof Answer)[];

/** One mocked tool. */
export const MockTool = z.strictObject({
  description: z.string().default("").describe("what the tool does, as tools/list shows it"),
  input_schema: z.record(z.string(), z.unknown()).default({ type: "object" }).describe(
    "JSON Schema of the arguments (an object schema); a call that does not match it is a tool error",
  ),
  ...Answer,
}).check((ctx) => {
  const given = ANSWER_KEYS.filter((k) => k in ctx.value);
  if (given.length !== 1) {
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      message: given.length === 0
        ? `a tool answers with one of ${ANSWER_KEYS.map((k) => `\`${k}\``).join(", ")}`
        : `a tool answers with one of ${given.map((k) => `\`${k}\``).join(", ")}, not several`,
    });
  }
  const expr = ctx.value.expr;
  const problem = expr === undefined ? null : parseCheck(expr);
  if (problem) ctx.issues.push({ code: "custom", input: expr, path: ["expr"], message: problem.message });
  const schema = schemaProblem(ctx.value.input_schema);
  if (schema) {
    ctx.issues.push({
      code: "custom",
      input: ctx.value.input_schema,
      path: ["input_schema"],
      message: schema.message,
    });
  }
}).meta({ id: "MockTool" });
export type MockTool = z.infer<typeof MockTool>;

/** A spec file: the server's name and its tools by name. */
export const MockSpec = z.strictObject({
  name: z.string().min(1).optional().describe(
    "the server's name in the MCP handshake (default: the file's name)",
  ),
  tools: z.record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "a tool name is letters, digits, _ . -"),
    MockTool,
  )
    .describe("the tools, by name"),
}).meta({ id: "MockSpec" });
export type MockSpec = z.infer<typeof MockSpec>;

/** Where the spec format is written down, for every error about a spec. */
export const SPEC_DOC = "docs/testing.md#mock-mcp-servers";

/** Parses a spec file's text; a syntax error or a field that does not validate is `mock_spec_invalid` with file:line:col. */
export function parseMockSpec(text: string, file: string): MockSpec & { name: string } {
  const parsed = parseSpecText(text, file, MockSpec);
  if ("problems" in parsed) throw invalid(parsed.problems.join("\n"));
  return { ...parsed.data, name: parsed.data.name ?? basename(file, extname(file)) };
}

/**
 * A YAML or JSON file's text checked against a zod schema: its data, or each problem as
 * `file:line:col: what (at /pointer)` (`stn faker --tools` files are read the same way).
 */
export function parseSpecText<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): { data: z.output<S> } | { problems: string[] } {
  const parsed = parseSource(text);
  if ("error" in parsed) {
    const at = parsed.error.position ? `:${parsed.error.position.line}:${parsed.error.position.column}` : "";
    return { problems: [`${file}${at}: ${parsed.error.message}`] };
  }
  const checked = schema.safeParse(parsed.value);
  if (checked.success) return { data: checked.data };
  return {
    problems: checked.error.issues.map((i) => {
      const path = i.path.map((p) => typeof p === "symbol" ? String(p) : p);
      const pos = parsed.locate(path);
      const where = pos ? `${file}:${pos.line}:${pos.column}` : file;
      const what = i.code === "unrecognized_keys"
        ? `unknown field ${i.keys.map((k) => `\`${k}\``).join(", ")}`
        : i.message;
      return `${where}: ${what} (at ${toPointer(path) || "/"})`;
    }),
  };
}

function invalid(message: string): StationError {
  return new StationError("mock_spec_invalid", message, {
    status: 400,
    exitCode: 2,
    hint:
      `${SPEC_DOC} describes the spec file (tools, each with description, input_schema and one of result, expr, sequence, error)`,
  });
}
