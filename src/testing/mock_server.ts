/** A mock MCP server (`stn mock`): a spec's tools as an MCP catalog, each answering as its spec says. */

import { StationError } from "../errors.ts";
import type { McpCatalog } from "../mcp/server/server.ts";
import type { McpToolSpec } from "../mcp/server/tool.ts";
import { VERSION } from "../version.ts";
import { evaluate } from "../workflows/expr.ts";
import { schemaViolation } from "../workflows/json_schema.ts";
import type { MockSpec, MockTool } from "./mock_spec.ts";

/**
 * The catalog a mock server serves: every tool of the spec, listed with its description and input schema.
 * A call whose arguments do not match the schema is a tool error (`mock_input_invalid`), as a real server's
 * would be; otherwise the tool answers its `result`, its `expr` evaluated over the call's `args`, the next
 * of its `sequence` (the last repeats; one count per tool for the server's life, across sessions), or fails
 * with its `error`.
 */
export function mockCatalog(spec: MockSpec & { name: string }): McpCatalog {
  const tools = Object.entries(spec.tools).map(([name, tool]) => mockTool(name, tool));
  return {
    name: spec.name,
    version: VERSION,
    instructions:
      `A mock MCP server (stn mock): its tools answer as the spec ${spec.name} says, nothing is real.`,
    tools: () => tools,
  };
}

function mockTool(name: string, tool: MockTool): McpToolSpec {
  let calls = 0;
  return {
    name,
    description: tool.description,
    inputSchema: tool.input_schema,
    call: async (given) => {
      const args = structuredClone(given);
      const problem = schemaViolation(tool.input_schema, args);
      if (problem) {
        throw new StationError(
          "mock_input_invalid",
          `arguments of ${name} do not match its input_schema: ${problem}`,
          {
            hint: "call the tool with the arguments its input schema (tools/list) asks for",
          },
        );
      }
      const n = calls++;
      if (tool.error !== undefined) {
        throw new StationError("mock_tool_failed", tool.error, {
          hint: `the mock's spec says ${name} fails`,
        });
      }
      if (tool.sequence !== undefined) return tool.sequence[Math.min(n, tool.sequence.length - 1)];
      if (tool.expr !== undefined) return await evaluate(tool.expr, { args }, { args });
      return tool.result;
    },
  };
}
