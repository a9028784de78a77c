import type { StationClient } from "./http.ts";
import type { ValidationResult } from "../workflows/definition/validate.ts";
import type { SaveResult, WorkflowRecord, WorkflowVersion } from "../workflows/store.ts";
import type { SyncReport } from "../workflows/sync.ts";

/** A stored version with its workflow record (GET /api/v1/workflows/:id[/versions/:n]). */
export type WorkflowShow = WorkflowVersion & { workflow: WorkflowRecord };

/** Lists stored workflows, optionally one status only. */
export function listWorkflows(
  client: StationClient,
  status?: "active" | "disabled",
): Promise<WorkflowRecord[]> {
  return client.json<{ workflows: WorkflowRecord[] }>("GET", "/api/v1/workflows", { query: { status } })
    .then((r) => r.workflows);
}

/** Fetches a workflow's latest version, or version `version`. */
export function getWorkflow(client: StationClient, id: string, version?: number): Promise<WorkflowShow> {
  return client.json<WorkflowShow>("GET", `/api/v1/workflows/${encodeURIComponent(id)}`, {
    query: { version },
  });
}

/** Lists a workflow's versions (without definitions). */
export function listWorkflowVersions(
  client: StationClient,
  id: string,
): Promise<Omit<WorkflowVersion, "definition">[]> {
  return client.json<{ versions: Omit<WorkflowVersion, "definition">[] }>(
    "GET",
    `/api/v1/workflows/${encodeURIComponent(id)}/versions`,
  ).then((r) => r.versions);
}

/** Creates or updates a workflow from a JSON definition. */
export function saveWorkflow(
  client: StationClient,
  definition: unknown,
): Promise<SaveResult & { warnings: ValidationResult["warnings"] }> {
  return client.json("POST", "/api/v1/workflows", { body: definition });
}

/** Validates a definition on the server without storing it. */
export function validateWorkflow(client: StationClient, definition: unknown): Promise<ValidationResult> {
  return client.json("POST", "/api/v1/workflows/validate", { body: definition });
}

/** Disables a workflow (kept with its versions). */
export function disableWorkflow(client: StationClient, id: string): Promise<{ workflow: WorkflowRecord }> {
  return client.json("DELETE", `/api/v1/workflows/${encodeURIComponent(id)}`);
}

/** Re-enables a disabled workflow. */
export function enableWorkflow(client: StationClient, id: string): Promise<{ workflow: WorkflowRecord }> {
  return client.json("POST", `/api/v1/workflows/${encodeURIComponent(id)}/enable`);
}

/** Deletes a workflow and all its versions. */
export function purgeWorkflow(client: StationClient, id: string): Promise<{ id: string; deleted: true }> {
  return client.json("DELETE", `/api/v1/workflows/${encodeURIComponent(id)}`, { query: { purge: true } });
}

/** Syncs an environment's workflow files (default: the configured environment). */
export function syncWorkflows(client: StationClient, environment?: string): Promise<SyncReport> {
  return client.json("POST", "/api/v1/sync", { body: environment ? { environment } : {} });
}
