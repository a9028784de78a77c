/** The MCP annotations of the management tools, derived from the HTTP operation each tool amounts to. */

import type { McpToolSpec } from "./tool.ts";

/** The method of an API operation, as the OpenAPI document names it. */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/**
 * The API operation each management tool amounts to (`METHOD /api/v1/path`, as in the OpenAPI document).
 * The sandbox tools are called through POST /api/v1/sandbox/tools/{name}; their operation is the
 * sandbox route that does the same thing (sandbox_fs_read is a GET of a file).
 */
export const TOOL_OPERATIONS: Record<string, `${HttpMethod} /api/v1/${string}`> = {
  list_workflows: "GET /api/v1/workflows",
  get_workflow: "GET /api/v1/workflows/{id}",
  validate_workflow: "POST /api/v1/workflows/validate",
  apply_workflow: "POST /api/v1/workflows",
  delete_workflow: "DELETE /api/v1/workflows/{id}",
  start_workflow_run: "POST /api/v1/workflow-runs",
  get_workflow_run: "GET /api/v1/workflow-runs/{run_id}",
  list_workflow_runs: "GET /api/v1/workflow-runs",
  get_workflow_run_steps: "GET /api/v1/workflow-runs/{run_id}/steps",
  cancel_workflow_run: "POST /api/v1/workflow-runs/{run_id}/cancel",
  pause_workflow_run: "POST /api/v1/workflow-runs/{run_id}/pause",
  resume_workflow_run: "POST /api/v1/workflow-runs/{run_id}/resume",
  retry_workflow_run: "POST /api/v1/workflow-runs/{run_id}/retry",
  fork_workflow_run: "POST /api/v1/workflow-runs/{run_id}/fork",
  eval_workflow_expression: "POST /api/v1/workflow-runs/{run_id}/eval",
  list_workflow_approvals: "GET /api/v1/workflow-approvals",
  approve_workflow_step: "POST /api/v1/workflow-approvals/{id}/approve",
  reject_workflow_step: "POST /api/v1/workflow-approvals/{id}/reject",
  list_agents: "GET /api/v1/agents",
  get_agent: "GET /api/v1/agents/{name}",
  run_agent: "POST /api/v1/agents/{name}/runs",
  get_agent_run: "GET /api/v1/agent-runs/{run_id}",
  list_agent_runs: "GET /api/v1/agent-runs",
  cancel_agent_run: "POST /api/v1/agent-runs/{run_id}/cancel",
  list_files: "GET /api/v1/files",
  get_file_info: "GET /api/v1/files/{key}",
  delete_file: "DELETE /api/v1/files/{key}",
  upload_file: "PUT /api/v1/files/{key}",
  download_file: "GET /api/v1/files/{key}",
  sandbox_run: "POST /api/v1/sandbox/run",
  sandbox_open: "POST /api/v1/sandboxes",
  sandbox_exec: "POST /api/v1/sandboxes/{id}/exec",
  sandbox_fs_write: "PUT /api/v1/sandboxes/{id}/files/{path}",
  sandbox_fs_read: "GET /api/v1/sandboxes/{id}/files/{path}",
  sandbox_fs_list: "GET /api/v1/sandboxes/{id}/files",
  sandbox_fs_delete: "DELETE /api/v1/sandboxes/{id}/files/{path}",
  sandbox_stage_file: "POST /api/v1/sandboxes/{id}/stage",
  sandbox_publish_file: "POST /api/v1/sandboxes/{id}/publish",
  sandbox_close: "DELETE /api/v1/sandboxes/{id}",
  list_environments: "GET /api/v1/environments",
  run_tests: "POST /api/v1/tests",
  get_test_run: "GET /api/v1/tests/{id}",
  run_eval: "POST /api/v1/evals",
  get_eval: "GET /api/v1/evals/{eval_id}",
  get_eval_report: "GET /api/v1/evals/{eval_id}/report",
  list_evals: "GET /api/v1/evals",
  compare_evals: "GET /api/v1/evals/compare",
  list_eval_datasets: "GET /api/v1/eval-datasets",
  generate_eval_dataset: "POST /api/v1/eval-datasets/generate",
  sync_environment: "POST /api/v1/sync",
};

/** POST operations that only read (validation answers issues and stores nothing; eval only evaluates). */
const READING_POSTS = new Set(["validate_workflow", "eval_workflow_expression"]);
/** POST operations that end something for good: a client should ask first. */
const ENDING_POSTS = new Set(["cancel_workflow_run", "reject_workflow_step", "cancel_agent_run"]);

/**
 * The annotations of a tool by its operation's method: GET reads (and is idempotent), DELETE destroys
 * (idempotently), PUT replaces what is there (idempotent, destructive: it overwrites), POST creates or
 * acts (neither, unless it only reads or ends something).
 */
export function annotationsFor(name: string, method: HttpMethod): NonNullable<McpToolSpec["annotations"]> {
  if (method === "GET" || READING_POSTS.has(name)) {
    return { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
  }
  if (method === "DELETE") return { readOnlyHint: false, destructiveHint: true, idempotentHint: true };
  if (method === "PUT") return { readOnlyHint: false, destructiveHint: true, idempotentHint: true };
  return { readOnlyHint: false, destructiveHint: ENDING_POSTS.has(name), idempotentHint: false };
}

/** A management tool's annotations, from its entry in TOOL_OPERATIONS (a tool without one is a bug). */
export function toolAnnotations(name: string): NonNullable<McpToolSpec["annotations"]> {
  const operation = TOOL_OPERATIONS[name];
  if (!operation) throw new Error(`management tool ${name} has no entry in TOOL_OPERATIONS`);
  return annotationsFor(name, operation.split(" ")[0] as HttpMethod);
}
