/** The agent server's `agent_<name>` tools: one per agent of the served environment. */

import { listAgents } from "../../agents/store.ts";
import type { AgentDefinition } from "../../agents/types.ts";
import type { StationClient } from "../../client/http.ts";
import type { Database } from "../../db/database.ts";
import { runAgent } from "./agent_runs.ts";
import { CONTROL } from "./agent_workflows.ts";
import type { McpToolSpec } from "./tool.ts";

/** The tool name of an agent: `agent_<name>`, with characters MCP tool names may not hold as `_`. */
export function agentToolName(name: string): string {
  return `agent_${name.replace(/[^A-Za-z0-9_.-]/g, "_")}`.slice(0, 128);
}

/**
 * The input schema of an agent's tool: `task`, `variables` (the agent's own input schema when it has
 * one, required when that schema requires something) and the `wait` / `timeout_seconds` controls.
 */
function toolSchema(def: AgentDefinition): Record<string, unknown> {
  const own = def.input_schema;
  const variables = own
    ? { ...own, description: "the agent's input variables" }
    : { type: "object", additionalProperties: true, description: "the agent's input variables, if any" };
  const required = Array.isArray(own?.required) && own.required.length ? ["task", "variables"] : ["task"];
  return {
    type: "object",
    properties: {
      task: { type: "string", minLength: 1, description: "what the agent should do" },
      variables,
      ...CONTROL,
    },
    required,
  };
}

/** The tool's description: the agent's own, and how to get its answer. */
function describe(def: AgentDefinition): string {
  return `Run the agent ${def.name}${def.description ? `: ${def.description}` : ""}. Returns run_id ` +
    "(get_run_status follows it), or with wait: true the finished run with its response (and result, " +
    "when the agent answers JSON).";
}

/**
 * The agent server's tools for agents: one `agent_<name>` per agent of `environment`, read from the
 * agents table on each list (so `stn sync` changes them at once), each run through the runs API.
 */
export function agentTools(db: Database, environment: string, client: StationClient): McpToolSpec[] {
  return listAgents(db, environment).map(({ definition: def }) => ({
    name: agentToolName(def.name),
    description: describe(def),
    inputSchema: toolSchema(def),
    // The API checks task and the variables (agent_input_invalid names each problem).
    call: async (args, signal) => {
      const body = {
        task: args.task as string,
        variables: args.variables as Record<string, unknown>,
        environment,
      };
      const how = { wait: args.wait === true, inspectTool: "get_run_status" };
      const timeout = typeof args.timeout_seconds === "number" ? args.timeout_seconds : undefined;
      const run = await runAgent(client, {
        agent: def.name,
        body,
        how: { ...how, timeoutSeconds: timeout },
        signal,
      });
      return how.wait ? run : { run_id: run.run_id, status: run.status };
    },
  }));
}
