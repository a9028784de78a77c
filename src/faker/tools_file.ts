/**
 * The tools file of `stn faker --standalone --tools FILE` (docs/faker.md#standalone): the tools to serve with
 * no real server, as a `stn mock` spec names them; the model writes every answer.
 */

import { basename, extname } from "node:path";
import { z } from "zod";
import { StationError } from "../errors.ts";
import { parseSpecText } from "../testing/mock_spec.ts";
import { schemaProblem } from "../workflows/json_schema.ts";
import type { FakerTool } from "./session.ts";

const Schema = z.record(z.string(), z.unknown()).check((ctx) => {
  const problem = schemaProblem(ctx.value);
  if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: problem.message });
});

/** One tool: how it is listed, and the shape of its answers when it has one. */
const ToolEntry = z.object({
  description: z.string().default(""),
  input_schema: Schema.default({ type: "object" }),
  output_schema: Schema.optional().describe("JSON Schema of the structured answer the model writes"),
}).describe("a `stn mock` spec's tool; its answer fields (result, expr, error, sequence) are not used");

/** A tools file: the server's name and its tools by name. */
export const ToolsFile = z.object({
  name: z.string().min(1).optional(),
  tools: z.record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "a tool name is letters, digits, _ . -"),
    ToolEntry,
  )
    .refine((t) => Object.keys(t).length > 0, "name at least one tool"),
});

/** The server name and tools of a tools file's text; a file that does not validate is `faker_tools_invalid`. */
export function parseToolsFile(text: string, file: string): { name: string; tools: FakerTool[] } {
  const parsed = parseSpecText(text, file, ToolsFile);
  if ("problems" in parsed) {
    throw new StationError("faker_tools_invalid", parsed.problems.join("\n"), {
      status: 400,
      exitCode: 2,
      hint: "a tools file is a `stn mock` spec (name, tools: each with description, input_schema, " +
        "optional output_schema); docs/faker.md#standalone",
    });
  }
  return {
    name: parsed.data.name ?? basename(file, extname(file)),
    tools: Object.entries(parsed.data.tools).map(([name, t]) => ({
      name,
      description: t.description,
      input_schema: t.input_schema,
      ...(t.output_schema && { output_schema: t.output_schema }),
    })),
  };
}
