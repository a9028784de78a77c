/** The agent MCP server (:8587): one tool per agent and per active workflow. */

import type { StationClient } from "../../client/http.ts";
import type { Database } from "../../db/database.ts";
import { log } from "../../log.ts";
import { VERSION } from "../../version.ts";
import type { WorkflowStore } from "../../workflows/store.ts";
import { agentTools } from "./agent_tools.ts";
import { runStatusTool, workflowRunTools } from "./agent_workflows.ts";
import { managementResources } from "./resources.ts";
import type { McpCatalog } from "./server.ts";
import type { McpToolSpec } from "./tool.ts";
import { errorMessage } from "../../errors.ts";

const INSTRUCTIONS = "Each agent_<name> tool runs that agent on a task (with its variables); each " +
  "workflow_<id> tool starts a run of that workflow with the arguments as its input. Both return run_id " +
  "(or, with wait: true, the finished run); get_run_status follows a run.";

/** What the agent server serves: the agents of one environment, the active workflows. */
export interface AgentServerSources {
  db: Database;
  /** The served environment (`workflows.environment`). */
  environment: string;
  workflows: WorkflowStore;
}

/**
 * The agent server (:8587/mcp): one tool per agent of the served environment and per active workflow,
 * and get_run_status; and the management server's read-only resources (the DSL reference, the
 * workflows, the agents, runs by id).
 */
export function agentCatalog(sources: AgentServerSources, client: StationClient): McpCatalog {
  const status = runStatusTool(client);
  return {
    name: "stn-agents",
    version: VERSION,
    instructions: INSTRUCTIONS,
    tools: (): McpToolSpec[] => [
      ...agentTools(sources.db, sources.environment, client),
      ...workflowRunTools(sources.workflows, client),
      status,
    ],
    resources: managementResources(client),
  };
}

/** A tool list's identity: the names and input schemas clients see. */
function fingerprint(tools: McpToolSpec[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.description, t.inputSchema]));
}

/** Something whose changes may change the agent server's tools (the workflow store, the agents' sync). */
export interface ChangeSource {
  onChange(listener: () => void): () => void;
}

/**
 * Calls `notify` when the catalog's tool list has changed, looked at after each change of a source (a sync
 * saves many files at once: the changes of one tick are looked at once). Returns the unsubscribe.
 */
export function watchTools(
  catalog: McpCatalog,
  sources: ChangeSource[],
  notify: () => Promise<void>,
): () => void {
  let last = fingerprint(catalog.tools() as McpToolSpec[]);
  let pending = false;
  const look = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      try {
        const now = fingerprint(catalog.tools() as McpToolSpec[]);
        if (now === last) return;
        last = now;
        notify().catch((err: Error) => log.warn("mcp: list_changed failed", { error: err.message }));
      } catch (err) {
        log.warn("mcp: reading the agent tools failed", { error: errorMessage(err) });
      }
    }, 0);
  };
  const stops = sources.map((s) => s.onChange(look));
  return () => stops.forEach((stop) => stop());
}
