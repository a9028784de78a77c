/** Calls of /api/v1/workflows: stored definitions, their versions, validation. */

import type { SyncReport } from "../contract/sync.ts";
import * as syncAnswers from "./answers/sync.ts";
import type {
  SaveResult,
  ValidationReport,
  WorkflowEnvelope,
  WorkflowRecord,
  WorkflowShow,
  WorkflowVersionInfo,
} from "../contract/workflows.ts";
import * as workflowsAnswers from "./answers/workflows.ts";
import { StationError } from "../errors.ts";
import type { StationClient } from "./http.ts";

export type { WorkflowShow };

const workflowPath = (id: string) => `/api/v1/workflows/${encodeURIComponent(id)}`;

/** Lists stored workflows, optionally one status only. */
export async function listWorkflows(
  client: StationClient,
  status?: "active" | "disabled",
): Promise<WorkflowRecord[]> {
  return (await client.json("GET", "/api/v1/workflows", {
    query: { status },
    answer: workflowsAnswers.WorkflowList,
  }))
    .workflows;
}

/** Fetches a workflow's latest version, or version `version`. */
export function getWorkflow(client: StationClient, id: string, version?: number): Promise<WorkflowShow> {
  return client.json("GET", workflowPath(id), { query: { version }, answer: workflowsAnswers.WorkflowShow });
}

/** Lists a workflow's versions (without definitions). */
export async function listWorkflowVersions(
  client: StationClient,
  id: string,
): Promise<WorkflowVersionInfo[]> {
  return (await client.json("GET", `${workflowPath(id)}/versions`, {
    answer: workflowsAnswers.WorkflowVersionList,
  })).versions;
}

/** Creates or updates a workflow from a JSON definition. */
export function saveWorkflow(client: StationClient, definition: unknown): Promise<SaveResult> {
  return client.json("POST", "/api/v1/workflows", { body: definition, answer: workflowsAnswers.SaveResult });
}

/** Validates a definition on the server without storing it. */
export function validateWorkflow(client: StationClient, definition: unknown): Promise<ValidationReport> {
  return client.json("POST", "/api/v1/workflows/validate", {
    body: definition,
    answer: workflowsAnswers.ValidationReport,
  });
}

/** Disables a workflow (kept with its versions). */
export async function disableWorkflow(client: StationClient, id: string): Promise<WorkflowEnvelope> {
  const answer = await client.json("DELETE", workflowPath(id), {
    answer: workflowsAnswers.DeleteWorkflowResult,
  });
  if (answer.deleted === false) return { workflow: answer.workflow };
  throw new StationError("invalid_response", `DELETE ${workflowPath(id)}: deleted where disabled was asked`);
}

/** Re-enables a disabled workflow. */
export function enableWorkflow(client: StationClient, id: string): Promise<WorkflowEnvelope> {
  return client.json("POST", `${workflowPath(id)}/enable`, { answer: workflowsAnswers.WorkflowEnvelope });
}

/** Deletes a workflow and all its versions. */
export async function purgeWorkflow(
  client: StationClient,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const answer = await client.json("DELETE", workflowPath(id), {
    query: { purge: true },
    answer: workflowsAnswers.DeleteWorkflowResult,
  });
  if (answer.deleted) return { id: answer.id, deleted: true };
  throw new StationError(
    "invalid_response",
    `DELETE ${workflowPath(id)}?purge=true: disabled where delete was asked`,
  );
}

/** How long a sync may take: MCP discovery starts every server of the environment (up to 60 s each). */
const SYNC_TIMEOUT_MS = 10 * 60_000;

/** Syncs an environment's files: MCP configs, then workflows (default: the configured environment). */
export function syncWorkflows(
  client: StationClient,
  environment?: string,
  options: { trust?: boolean } = {},
): Promise<SyncReport> {
  return client.json("POST", "/api/v1/sync", {
    body: { ...(environment ? { environment } : {}), ...(options.trust ? { trust: true } : {}) },
    answer: syncAnswers.SyncReport,
    signal: AbortSignal.timeout(SYNC_TIMEOUT_MS),
  });
}
