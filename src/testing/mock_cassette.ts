/** `stn mock --from-cassette`: the MCP tools a recorded cassette saw, answering as recorded. */

import { isDeepStrictEqual } from "node:util";
import { exposedToolName } from "../mcp/catalogue.ts";
import type { Cassette, ToolEvent } from "./cassette.ts";
import type { MockedTool } from "./mock_server.ts";
import type { ToolAnswer } from "./mocks.ts";

/**
 * The MCP tools of a cassette (docs/testing.md#mock-mcp-servers): every tool a recorded model request offered
 * under an MCP tool's name (`__<tool>`, served as `<tool>`, with its recorded description and input schema).
 * A call answers what a recorded call of the tool with the same arguments returned (the first such not
 * answered yet; the last repeats), else the next recorded call in order (the last repeats); a tool the
 * recording offered but never called fails saying so. Sandbox tools and child agents are not MCP tools.
 */
export function cassetteTools(cassette: Cassette): MockedTool[] {
  const offered = new Map<string, { description: string; input_schema: Record<string, unknown> }>();
  const calls = new Map<string, ToolEvent[]>();
  for (const run of cassette.runs) {
    for (const e of run.events) {
      if ("model" in e) {
        for (const t of e.model.request.tools) if (!offered.has(t.name)) offered.set(t.name, t);
      } else calls.set(e.tool.name, [...(calls.get(e.tool.name) ?? []), e.tool]);
    }
  }
  const tools: MockedTool[] = [];
  for (const [exposed, t] of offered) {
    const name = exposed.slice(2);
    if (exposedToolName(name) !== exposed) continue;
    const recorded = calls.get(exposed) ?? [];
    const sameArgs = new Map<string, number>();
    tools.push({
      name,
      description: t.description,
      inputSchema: Object.keys(t.input_schema).length ? t.input_schema : { type: "object" },
      answer: (args, n) => {
        if (recorded.length === 0) {
          return { error: `the cassette has no recorded call of ${name} to answer with` };
        }
        const same = recorded.filter((r) => isDeepStrictEqual(r.args ?? {}, args));
        const key = JSON.stringify(args);
        const k = sameArgs.get(key) ?? 0;
        sameArgs.set(key, k + 1);
        return answerOf(
          same.length ? same[Math.min(k, same.length - 1)] : recorded[Math.min(n, recorded.length - 1)],
        );
      },
    });
  }
  return tools;
}

function answerOf(r: ToolEvent): ToolAnswer {
  return r.error !== undefined ? { error: r.error } : { result: r.output ?? "" };
}
