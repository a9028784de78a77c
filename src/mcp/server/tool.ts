/** A tool as stn's MCP servers offer it: name, description, zod input schema, annotations and handler. */

import { z } from "zod";
import { type ErrorBody, toStationError } from "../../errors.ts";
import { parseWith } from "../../lib/parse.ts";

/**
 * A tool as stn's MCP servers offer it. Providers (the management tools, the workflows of the agent
 * server, and later the agents) return these; the SDK adapter never leaks past this type.
 */
export interface McpToolSpec {
  name: string;
  /** A display name (`stn faker` lists a real server's as it declared it). */
  title?: string;
  description: string;
  /** JSON Schema of the arguments: an object schema. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the tool's structured result (`stn faker` lists a real server's as it declared it). */
  outputSchema?: Record<string, unknown>;
  /** What the tool does to the world, for clients that ask before calling (MCP tool annotations). */
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** A string the call returns is the text content as it is, not as JSON (`stn mock`'s answers). */
  rawStrings?: boolean;
  /** The call returns a whole ToolResult, sent as it is (`stn faker` passes a real server's on). */
  rawResult?: boolean;
  /** Runs the tool; throws a StationError for an answer the caller must see as a tool error. */
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** What tools/call answers: the API's JSON as text (and as structured content), or its error body. */
export interface ToolResult {
  [key: string]: unknown;
  content: ({ type: "text"; text: string } | Record<string, unknown>)[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The JSON Schema of a zod input schema, as an MCP client reads it (the input side of coercions and
 * defaults). A contract schema with an id comes out as a `$ref` to its `$defs` entry; MCP wants the
 * object at the top, so that entry is inlined.
 */
export function inputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  const ref = typeof json.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(json.$ref)?.[1] : undefined;
  if (ref === undefined) return json;
  const { [ref]: top, ...defs } = json.$defs as Record<string, Record<string, unknown>>;
  return { ...top, ...(Object.keys(defs).length ? { $defs: defs } : {}) };
}

/**
 * Argument names the tools took before every name was snake_case (docs/mcp.md): still accepted,
 * deprecated, renamed before the schema checks the arguments.
 */
export const DEPRECATED_ARGUMENTS: Record<string, string> = { runId: "run_id", workflowId: "workflow_id" };

/** The arguments with deprecated names renamed (the snake_case name wins when both are given). */
function renameDeprecated(args: Record<string, unknown>): Record<string, unknown> {
  const out = { ...args };
  for (const [old, name] of Object.entries(DEPRECATED_ARGUMENTS)) {
    if (!(old in out)) continue;
    if (!(name in out)) out[name] = out[old];
    delete out[old];
  }
  return out;
}

/** A tool whose arguments are checked with a zod schema (the API's own) before `run` sees them. */
export function zodTool<S extends z.ZodType>(
  name: string,
  description: string,
  input: S,
  run: (args: z.output<S>, signal: AbortSignal) => Promise<unknown>,
): McpToolSpec {
  return {
    name,
    description,
    inputSchema: inputJsonSchema(input),
    call: (args, signal) => run(parseWith(input, renameDeprecated(args), `${name} arguments`), signal),
  };
}

/** Runs a tool; a failure becomes a tool error carrying the API's error body (code, message, hint). */
export async function callToolSafely(
  tool: McpToolSpec,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolResult> {
  try {
    const value = await tool.call(args, signal);
    if (tool.rawResult) return value as ToolResult;
    if (tool.rawStrings && typeof value === "string") return { content: [{ type: "text", text: value }] };
    return toolResult(value);
  } catch (err) {
    const body: ErrorBody = toStationError(err).toBody();
    return { ...toolResult(body), isError: true };
  }
}

function toolResult(value: unknown): ToolResult {
  const text = value === undefined ? "{}" : JSON.stringify(value);
  const structured = value !== null && typeof value === "object" && !Array.isArray(value)
    ? { structuredContent: value as Record<string, unknown> }
    : {};
  return { content: [{ type: "text", text }], ...structured };
}
