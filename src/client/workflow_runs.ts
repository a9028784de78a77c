import type { RunEvent } from "../events/run_events.ts";
import type { ApprovalView, RunView, StepView } from "../workflows/engine/views.ts";
import type { StationClient } from "./http.ts";

/** Calls of /api/v1/workflow-runs and /api/v1/workflow-approvals. */

export interface StartRunBody {
  workflowId?: string;
  version?: number;
  input?: Record<string, unknown>;
  definition?: unknown;
  /** `manual` when a person starts it from the CLI (becomes `workflow.trigger.type`). */
  trigger?: "manual" | "api" | "mcp";
}

/** POST /api/v1/workflow-runs */
export function startRun(client: StationClient, body: StartRunBody): Promise<RunView> {
  return client.json("POST", "/api/v1/workflow-runs", { body });
}

/** GET /api/v1/workflow-runs */
export function listRuns(
  client: StationClient,
  query: { workflow_id?: string; status?: string; limit?: number; cursor?: string } = {},
): Promise<{ runs: RunView[]; next_cursor: string | null }> {
  return client.json("GET", "/api/v1/workflow-runs", { query });
}

/** GET /api/v1/workflow-runs/:id */
export function getRun(client: StationClient, runId: string): Promise<RunView> {
  return client.json("GET", `/api/v1/workflow-runs/${encodeURIComponent(runId)}`);
}

/** GET /api/v1/workflow-runs/:id/steps */
export async function runSteps(client: StationClient, runId: string): Promise<StepView[]> {
  return (await client.json<{ steps: StepView[] }>(
    "GET",
    `/api/v1/workflow-runs/${encodeURIComponent(runId)}/steps`,
  ))
    .steps;
}

/** POST /api/v1/workflow-runs/:id/cancel|pause|resume */
export function controlRun(
  client: StationClient,
  runId: string,
  action: "cancel" | "pause" | "resume",
): Promise<RunView> {
  return client.json("POST", `/api/v1/workflow-runs/${encodeURIComponent(runId)}/${action}`, { body: {} });
}

/** GET /api/v1/workflow-approvals */
export async function listApprovals(
  client: StationClient,
  query: { run_id?: string; status?: string } = {},
): Promise<ApprovalView[]> {
  return (await client.json<{ approvals: ApprovalView[] }>("GET", "/api/v1/workflow-approvals", { query }))
    .approvals;
}

/** POST /api/v1/workflow-approvals/:id/approve|reject */
export function decideApproval(
  client: StationClient,
  id: string,
  verb: "approve" | "reject",
  body: { actor?: string; comment?: string },
): Promise<ApprovalView> {
  return client.json("POST", `/api/v1/workflow-approvals/${encodeURIComponent(id)}/${verb}`, { body });
}

/**
 * GET /api/v1/workflow-runs/:id/events as an async iterator of events, resuming after `after`
 * (a seq or "now"); ends after the run's terminal event (or when caught up, with follow false).
 */
export async function* runEvents(
  client: StationClient,
  runId: string,
  options: { after?: number | "now"; follow?: boolean; signal?: AbortSignal } = {},
): AsyncGenerator<RunEvent> {
  const res = await client.fetch("GET", `/api/v1/workflow-runs/${encodeURIComponent(runId)}/events`, {
    query: { after: options.after, follow: options.follow === false ? "false" : undefined },
    headers: { accept: "text/event-stream" },
    signal: options.signal,
  });
  let buffer = "";
  for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart())
        .join("\n");
      if (data) yield JSON.parse(data) as RunEvent;
    }
  }
}
