import type { StationClient } from "../../client/http.ts";
import { toolDefinitions } from "../../sandbox/tools.ts";
import type { McpToolSpec } from "./tool.ts";

/**
 * The sandbox tools, as defined for models (src/sandbox/tools.ts): the same names, descriptions and input
 * schemas, each called through POST /api/v1/sandbox/tools/{name}, which checks the input as it checks a
 * model's. The MCP request's signal bounds the call: a long sandbox_run is not cut at the client's default.
 */
export function sandboxTools(client: StationClient): McpToolSpec[] {
  return toolDefinitions().map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.input_schema as Record<string, unknown>,
    call: (args, signal) => client.json("POST", `/api/v1/sandbox/tools/${t.name}`, { body: args, signal }),
  }));
}
