import { TOOL_OPERATIONS } from "../../src/mcp/server/annotations.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { connectHttp, startMcpStation } from "./helpers.ts";

/** `/x/{id}` and `/x/{run_id}` both become `/x/{}`, so declared operations compare with the document's. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, "{}").replace(/(.)\/$/, "$1");

/** What each HTTP method says about a tool, as MCP clients read the hints. */
function expectedHints(method: string) {
  switch (method) {
    case "GET":
      return { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
    case "DELETE":
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: true };
    case "PUT":
      return { readOnlyHint: false, idempotentHint: true };
    default:
      return { readOnlyHint: false, idempotentHint: false };
  }
}

Deno.test("mcp: every management tool's annotations match the method of the API operation it amounts to", async () => {
  const s = await startMcpStation();
  const client = await connectHttp(s.mcpUrl);
  try {
    const doc = await (await fetch(`${s.station.url}/api/v1/openapi.json`)).json();
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${shape(path)}`);
    }
    const tools = (await client.listTools()).tools as {
      name: string;
      annotations: Record<string, boolean>;
    }[];
    assert(tools.length >= 35, `only ${tools.length} tools`);
    for (const tool of tools) {
      const operation = TOOL_OPERATIONS[tool.name];
      assert(operation, `${tool.name} names no API operation`);
      const [method, path] = operation.split(" ");
      assert(documented.has(`${method} ${shape(path)}`), `${tool.name}: ${operation} is not in the API`);
      const want = ["validate_workflow", "eval_workflow_expression"].includes(tool.name)
        ? { readOnlyHint: true, destructiveHint: false, idempotentHint: true } // a POST that stores nothing
        : expectedHints(method);
      for (const [hint, value] of Object.entries(want)) {
        assertEquals(tool.annotations[hint], value, `${tool.name} (${operation}): ${hint}`);
      }
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint"]) {
        assertEquals(typeof tool.annotations[hint], "boolean", `${tool.name} states ${hint}`);
      }
    }
    const hints = (name: string) => tools.find((t) => t.name === name)!.annotations;
    assertEquals(hints("sandbox_fs_read").readOnlyHint, true);
    assertEquals(hints("sandbox_fs_list").readOnlyHint, true);
    assertEquals(hints("cancel_workflow_run").destructiveHint, true, "cancelling ends a run for good");
    assertEquals(hints("start_workflow_run").destructiveHint, false);
  } finally {
    await client.close();
    await s.close();
  }
});
