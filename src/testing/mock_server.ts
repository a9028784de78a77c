/** A mock MCP server (`stn mock`): a spec's tools as an MCP catalog, each answering as its spec says. */

import { checkToolInput } from "../agents/tool_input.ts";
import { StationError } from "../errors.ts";
import type { McpCatalog } from "../mcp/server/server.ts";
import type { McpToolSpec } from "../mcp/server/tool.ts";
import { VERSION } from "../version.ts";
import { evaluate } from "../workflows/expr.ts";
import type { MockSpec, MockTool } from "./mock_spec.ts";
import type { ToolAnswer } from "./mocks.ts";

/** A tool a mock server serves: how it is listed, and its answer to the n-th call (0-based) with `args`. */
export interface MockedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  answer(args: Record<string, unknown>, n: number): ToolAnswer;
}

/**
 * The catalog of a mock server (`spec` names it in its instructions). A call whose arguments do not match the
 * tool's input schema is a tool error (`mock_input_invalid`), as a real server's would be; otherwise the tool
 * answers `result` (a string as it is, anything else as JSON), `expr` evaluated over the call's arguments, or
 * fails with `error` (`mock_tool_failed`). Calls are counted per tool for the server's life, across sessions.
 */
export function mockCatalog(name: string, source: string, tools: MockedTool[]): McpCatalog {
  const specs = tools.map(serve);
  return {
    name,
    version: VERSION,
    instructions: `A mock MCP server (stn mock): its tools answer as ${source} says; nothing is real.`,
    tools: () => specs,
  };
}

/** The tools of a spec file. */
export function specTools(spec: MockSpec): MockedTool[] {
  return Object.entries(spec.tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: tool.input_schema,
    answer: (_args, n) => answerOf(tool, n),
  }));
}

function answerOf(tool: MockTool, n: number): ToolAnswer {
  if (tool.sequence !== undefined) return tool.sequence[Math.min(n, tool.sequence.length - 1)];
  if (tool.error !== undefined) return { error: tool.error };
  if (tool.expr !== undefined) return { expr: tool.expr };
  return { result: tool.result };
}

function serve(tool: MockedTool): McpToolSpec {
  let calls = 0;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    rawStrings: true,
    call: async (given) => {
      // Checked as an agent's tool call is: leniently about the schema (a recording's may name draft-07).
      const checked = checkToolInput(given, tool.inputSchema);
      if ("problem" in checked) {
        throw new StationError("mock_input_invalid", `${tool.name}: ${checked.problem}`, {
          hint: "call the tool with the arguments its input schema (tools/list) asks for",
        });
      }
      const args = checked.value as Record<string, unknown>;
      const answer = tool.answer(args, calls++);
      if ("error" in answer) {
        throw new StationError("mock_tool_failed", answer.error, {
          hint: `the mock says ${tool.name} fails`,
        });
      }
      return "expr" in answer ? await evaluate(answer.expr, args, { args }) : answer.result;
    },
  };
}
