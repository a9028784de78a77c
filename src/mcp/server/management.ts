import type { StationClient } from "../../client/http.ts";
import { VERSION } from "../../version.ts";
import { toolAnnotations } from "./annotations.ts";
import { agentManagementTools } from "./management_agents.ts";
import { environmentTools } from "./management_environments.ts";
import { testTools } from "./management_tests.ts";
import { evalTools } from "./management_evals.ts";
import { fileTools } from "./management_files.ts";
import { sandboxTools } from "./management_sandboxes.ts";
import { workflowTools } from "./management_workflows.ts";
import { managementResources } from "./resources.ts";
import type { McpCatalog } from "./server.ts";
import type { McpToolSpec } from "./tool.ts";

const INSTRUCTIONS =
  "stn runs durable workflows, AI agents, sandboxes and files. Read station://docs/workflow-dsl before " +
  "writing a workflow; validate_workflow, then apply_workflow, then start_workflow_run. list_agents names " +
  "the agents run_agent runs. Errors carry a code and a hint.";

/**
 * Every management tool, calling the HTTP API through `client`: in-process (the app's own fetch) on
 * :8586, over the network for `stn mcp stdio` against a running server.
 */
export function managementTools(client: StationClient): McpToolSpec[] {
  return [
    ...workflowTools(client),
    ...agentManagementTools(client),
    ...fileTools(client),
    ...sandboxTools(client),
    ...environmentTools(client),
    ...testTools(client),
    ...evalTools(client),
  ].map((t) => ({ ...t, annotations: toolAnnotations(t.name) }));
}

/** The management server (:8586/mcp and `stn mcp stdio`): its tools and resources over one API client. */
export function managementCatalog(client: StationClient): McpCatalog {
  const tools = managementTools(client);
  return {
    name: "stn",
    version: VERSION,
    instructions: INSTRUCTIONS,
    tools: () => tools,
    resources: managementResources(client),
  };
}
