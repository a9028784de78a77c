/** The agent server's workflow tools: one per active workflow, its input schema as the tool's. */

import { z } from "zod";
import { getAgentRun } from "../../client/agent_runs.ts";
import type { StationClient } from "../../client/http.ts";
import { getRun, startRun, waitForRun } from "../../client/workflow_runs.ts";
import type { WorkflowStore } from "../../workflows/store.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

/** How long `wait: true` waits by default: under MCP clients' usual 60 s request timeout. */
export const DEFAULT_WAIT_S = 50;

/** The tool name of a workflow: `workflow_<id>`, with characters MCP tool names may not hold as `_`. */
export function workflowToolName(id: string): string {
  return `workflow_${id.replace(/[^A-Za-z0-9_.-]/g, "_")}`.slice(0, 128);
}

/** The `wait` and `timeout_seconds` controls of the run tools (workflows and agents), as JSON Schema. */
export const CONTROL = {
  wait: {
    type: "boolean",
    description: "wait for the run to end and return its result (default: return the run id at once)",
  },
  timeout_seconds: {
    type: "integer",
    minimum: 1,
    maximum: 3600,
    description:
      `with wait: stop waiting after this long (default ${DEFAULT_WAIT_S}) and return the run as it is`,
  },
};

/**
 * The input schema of a workflow's tool: its inputSchema's properties plus the `wait` and
 * `timeout_seconds` controls (left out where the workflow has inputs of those names: its own win).
 */
function toolSchema(inputSchema: Record<string, unknown> | undefined): Record<string, unknown> {
  const schema = { type: "object", ...(inputSchema ?? {}) } as Record<string, unknown>;
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  const controls = Object.fromEntries(Object.entries(CONTROL).filter(([k]) => !(k in props)));
  return { ...schema, properties: { ...props, ...controls } };
}

/** Starts a run with the arguments as input; with `wait`, answers the run once it ended (or the wait ran out). */
async function startAndMaybeWait(
  client: StationClient,
  { id, args, controls, signal }: {
    id: string;
    args: Record<string, unknown>;
    controls: string[];
    signal: AbortSignal;
  },
): Promise<unknown> {
  const input = { ...args };
  for (const k of controls) delete input[k];
  const run = await startRun(client, { workflow_id: id, input, trigger: "mcp" });
  if (!controls.includes("wait") || args.wait !== true) return { run_id: run.id, status: run.status };
  const seconds = typeof args.timeout_seconds === "number" ? args.timeout_seconds : DEFAULT_WAIT_S;
  return await waitForRun(client, run.id, { timeoutMs: seconds * 1000, signal }) ??
    await getRun(client, run.id);
}

/** One tool per active workflow, read from the store on each list (so `stn sync` changes them at once). */
export function workflowRunTools(store: WorkflowStore, client: StationClient): McpToolSpec[] {
  return store.list({ status: "active" }).map((w) => {
    const { definition } = store.get(w.id);
    const inputSchema = toolSchema(definition.inputSchema as Record<string, unknown> | undefined);
    const props = Object.keys((definition.inputSchema?.properties ?? {}) as Record<string, unknown>);
    const controls = Object.keys(CONTROL).filter((k) => !props.includes(k));
    return {
      name: workflowToolName(w.id),
      description: `Run the workflow ${w.id}${w.name ? ` (${w.name})` : ""}` +
        `${w.description ? `: ${w.description}` : ""}. Returns run_id (get_run_status follows it), ` +
        "or with wait: true the finished run.",
      inputSchema,
      // The API checks the input against the workflow's inputSchema (input_invalid names each problem).
      call: (args, signal) => startAndMaybeWait(client, { id: w.id, args, controls, signal }),
    };
  });
}

/** `get_run_status`: a workflow or agent run's status and, once it ended, its result or error. */
export function runStatusTool(client: StationClient): McpToolSpec {
  const tool = zodTool(
    "get_run_status",
    "A run's status with its result or error, for the run_id a workflow_* or agent_* tool returned " +
      "(workflow runs: pending, running, waiting, waiting_for_concurrency, paused, completed, failed, canceled; " +
      "agent runs: running, waiting_for_concurrency, completed, failed, canceled, with the agent's response).",
    z.strictObject({
      run_id: z.string().min(1).describe("the run_id a workflow_* or agent_* tool returned"),
    }),
    // Agent run ids carry their own prefix (arun_), workflow run ids are bare ULIDs.
    (a) => a.run_id.startsWith("arun_") ? getAgentRun(client, a.run_id) : getRun(client, a.run_id),
  );
  return { ...tool, annotations: { readOnlyHint: true } };
}
