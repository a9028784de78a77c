import type { StationClient } from "../../client/http.ts";
import { VERSION } from "../../version.ts";
import { agentManagementTools } from "./management_agents.ts";
import { environmentTools } from "./management_environments.ts";
import { testTools } from "./management_tests.ts";
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
  ].map((t) => ({ ...t, annotations: annotations(t.name) }));
}

/** Tools that only read: a client may call them without asking. */
const READ_ONLY = new Set([
  "list_workflows",
  "get_workflow",
  "validate_workflow",
  "get_workflow_run",
  "list_workflow_runs",
  "get_workflow_run_steps",
  "list_workflow_approvals",
  "list_agents",
  "get_agent",
  "get_agent_run",
  "list_agent_runs",
  "list_files",
  "get_file_info",
  "download_file",
  "list_environments",
  "get_test_run",
]);

/** Tools that remove or end something for good: a client should ask first. */
const DESTRUCTIVE = new Set([
  "delete_workflow",
  "cancel_workflow_run",
  "reject_workflow_step",
  "cancel_agent_run",
  "delete_file",
  "upload_file",
  "sandbox_fs_delete",
  "sandbox_close",
]);

function annotations(name: string): McpToolSpec["annotations"] {
  return READ_ONLY.has(name)
    ? { readOnlyHint: true }
    : { readOnlyHint: false, destructiveHint: DESTRUCTIVE.has(name) };
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
