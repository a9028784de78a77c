/** The management server's workflow, run and approval tools (each one API call). */

import { z } from "zod";
import type { StationClient } from "../../client/http.ts";
import { disableWorkflow, getWorkflow, listWorkflows, purgeWorkflow } from "../../client/workflows.ts";
import {
  controlRun,
  decideApproval,
  evalInRun,
  forkRun,
  getRun,
  listApprovals,
  listRuns,
  retryRun,
  runSteps,
  startRun,
} from "../../client/workflow_runs.ts";
import { EvalBody, ForkBody, RetryBody } from "../../contract/reruns.ts";
import { ApprovalIdParam, ApprovalListQuery, DecisionBody } from "../../contract/approvals.ts";
import { CancelBody, RunIdParam, RunListQuery, StartRunBody } from "../../contract/runs.ts";
import {
  DefinitionInput,
  DeleteWorkflowQuery,
  VersionQuery,
  WorkflowIdParam,
  WorkflowListQuery,
} from "../../contract/workflows.ts";
import { StationError } from "../../errors.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

/** A definition as a model writes it: the JSON object, or the YAML file's text. */
const DefinitionArgs = z.strictObject({
  definition: DefinitionInput.optional().describe("the workflow definition as a JSON object"),
  yaml: z.string().min(1).optional().describe("or the workflow file's YAML text"),
});

/**
 * Sends a definition to a workflows route: the JSON object, or the YAML text as `application/yaml` (the
 * API then names lines and columns in its issues). Answers the API's JSON.
 */
async function sendDefinition(
  client: StationClient,
  path: string,
  args: z.output<typeof DefinitionArgs>,
): Promise<unknown> {
  if ((args.definition === undefined) === (args.yaml === undefined)) {
    throw new StationError("invalid_request", "give exactly one of definition and yaml", {
      hint: "definition is the JSON object; yaml is the text of a .workflow.yaml file",
    });
  }
  if (args.definition !== undefined) return await client.json("POST", path, { body: args.definition });
  const res = await client.fetch("POST", path, {
    body: args.yaml,
    headers: { "content-type": "application/yaml" },
  });
  return await res.json();
}

const runArgs = RunIdParam;

/** The workflow, run and approval tools of the management server (each one API call). */
export function workflowTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "list_workflows",
      "List stored workflows (id, name, status, latest version, origin).",
      WorkflowListQuery,
      async (q) => ({ workflows: await listWorkflows(client, q.status) }),
    ),
    zodTool(
      "get_workflow",
      "A workflow's latest version (or the given version) with its definition.",
      WorkflowIdParam.extend(VersionQuery.shape),
      (a) => getWorkflow(client, a.id, a.version),
    ),
    zodTool(
      "validate_workflow",
      "Validate a workflow definition without storing it: every error and warning, with hints.",
      DefinitionArgs,
      (a) => sendDefinition(client, "/api/v1/workflows/validate", a),
    ),
    zodTool(
      "apply_workflow",
      "Store a workflow definition: creates it, or adds a version when the content changed (the id is in the definition).",
      DefinitionArgs,
      (a) => sendDefinition(client, "/api/v1/workflows", a),
    ),
    zodTool(
      "delete_workflow",
      'Disable a workflow (kept, no new runs), or with purge: "true" delete it and its versions.',
      WorkflowIdParam.extend(DeleteWorkflowQuery.shape),
      async (a) =>
        a.purge === "true"
          ? await purgeWorkflow(client, a.id)
          : { ...(await disableWorkflow(client, a.id)), deleted: false },
    ),
    zodTool(
      "start_workflow_run",
      "Start a run of a stored workflow (workflow_id, optional version), or once of an inline definition " +
        "(not stored unless save: true); returns the run.",
      StartRunBody.omit({ trigger: true, workflowId: true }),
      (a) => startRun(client, { ...a, trigger: "mcp" }),
    ),
    zodTool(
      "get_workflow_run",
      "A run: status, input, result or error.",
      runArgs,
      (a) => getRun(client, a.run_id),
    ),
    zodTool(
      "list_workflow_runs",
      "List runs, newest first, a page at a time (filter by workflow_id and status).",
      RunListQuery,
      (q) => listRuns(client, q),
    ),
    zodTool(
      "get_workflow_run_steps",
      "Every step attempt of a run with its status, output and error.",
      runArgs,
      async (a) => ({ steps: await runSteps(client, a.run_id) }),
    ),
    zodTool(
      "cancel_workflow_run",
      "Cancel a run.",
      runArgs.extend(CancelBody.shape),
      (a) =>
        client.json("POST", `/api/v1/workflow-runs/${encodeURIComponent(a.run_id)}/cancel`, {
          body: { reason: a.reason },
        }),
    ),
    zodTool(
      "pause_workflow_run",
      "Pause a run (steps in flight finish).",
      runArgs,
      (a) => controlRun(client, a.run_id, "pause"),
    ),
    zodTool(
      "resume_workflow_run",
      "Resume a paused run.",
      runArgs,
      (a) => controlRun(client, a.run_id, "resume"),
    ),
    zodTool(
      "retry_workflow_run",
      "Retry a failed or canceled run from the step it stopped at: the same run goes on, completed steps are " +
        "not run again; with version or definition, the rest runs with that (fixed) definition.",
      runArgs.extend(RetryBody.shape),
      ({ run_id, ...body }) => retryRun(client, run_id, body),
    ),
    zodTool(
      "fork_workflow_run",
      "Start a new run from a step (from) of a run: the steps before it reuse the parent's recorded outputs " +
        "(no model call, no sandbox, no approval), that step and what follows run.",
      runArgs.extend(ForkBody.shape),
      ({ run_id, ...body }) => forkRun(client, run_id, body),
    ),
    zodTool(
      "eval_workflow_expression",
      "Evaluate a JSONata expression against the data a step of a run saw (step), the run's data now, or a " +
        "given input: the value, or the error with its position.",
      runArgs.extend(EvalBody.shape),
      ({ run_id, ...body }) => evalInRun(client, run_id, body),
    ),
    zodTool(
      "list_workflow_approvals",
      "List human approvals (filter by run_id and status, e.g. pending).",
      ApprovalListQuery,
      async (q) => ({ approvals: await listApprovals(client, q) }),
    ),
    zodTool(
      "approve_workflow_step",
      "Approve a pending approval: its run continues.",
      ApprovalIdParam.extend(DecisionBody.shape),
      ({ id, ...body }) => decideApproval(client, id, "approve", { actor: "mcp", ...body }),
    ),
    zodTool(
      "reject_workflow_step",
      "Reject a pending approval: its step fails with approval_rejected.",
      ApprovalIdParam.extend(DecisionBody.shape),
      ({ id, ...body }) => decideApproval(client, id, "reject", { actor: "mcp", ...body }),
    ),
  ];
}
