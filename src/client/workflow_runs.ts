import type { Approval, DecisionBody } from "../contract/approvals.ts";
import * as approvalsAnswers from "./answers/approvals.ts";
import type { Run, RunEvent, RunList, StartRunBody, Step } from "../contract/runs.ts";
import * as runsAnswers from "./answers/runs.ts";
import type { Cassette } from "../contract/cassette.ts";
import * as cassetteAnswers from "./answers/cassette.ts";
import type {
  BulkRetryBody,
  BulkRetryResult,
  EvalBody,
  EvalResult,
  ForkBody,
  RetryBody,
} from "../contract/reruns.ts";
import * as rerunsAnswers from "./answers/reruns.ts";
import { StationError } from "../errors.ts";
import { sleep } from "../lib/async.ts";
import { startIdempotently, type StationClient } from "./http.ts";
import { type FollowEventsOptions, followRunEvents } from "./sse.ts";

/** Calls of /api/v1/workflow-runs and /api/v1/workflow-approvals. */

export type { StartRunBody };

const runPath = (runId: string) => `/api/v1/workflow-runs/${encodeURIComponent(runId)}`;

/**
 * POST /api/v1/workflow-runs under an Idempotency-Key (`idempotencyKey`, else one made for this call):
 * retried when the server was not reached or did not answer in time, without ever starting two runs.
 */
export function startRun(
  client: StationClient,
  body: StartRunBody,
  options: { idempotencyKey?: string } = {},
): Promise<Run> {
  return startIdempotently(
    options.idempotencyKey,
    (headers) => client.json("POST", "/api/v1/workflow-runs", { body, headers, answer: runsAnswers.Run }),
  );
}

/** GET /api/v1/workflow-runs */
export function listRuns(
  client: StationClient,
  query: { workflow_id?: string; status?: string; limit?: number; cursor?: string } = {},
): Promise<RunList> {
  return client.json("GET", "/api/v1/workflow-runs", { query, answer: runsAnswers.RunList });
}

/** GET /api/v1/workflow-runs/:id */
export function getRun(client: StationClient, runId: string): Promise<Run> {
  return client.json("GET", runPath(runId), { answer: runsAnswers.Run });
}

/** GET /api/v1/workflow-runs/:id/cassette: the recording of a run started with `record: true`. */
export function getRunCassette(client: StationClient, runId: string): Promise<Cassette> {
  return client.json("GET", `${runPath(runId)}/cassette`, { answer: cassetteAnswers.Cassette });
}

/** GET /api/v1/workflow-runs/:id/steps */
export async function runSteps(client: StationClient, runId: string): Promise<Step[]> {
  return (await client.json("GET", `${runPath(runId)}/steps`, { answer: runsAnswers.StepList })).steps;
}

/** POST /api/v1/workflow-runs/:id/cancel|pause|resume */
export function controlRun(
  client: StationClient,
  runId: string,
  action: "cancel" | "pause" | "resume",
): Promise<Run> {
  return client.json("POST", `${runPath(runId)}/${action}`, { body: {}, answer: runsAnswers.Run });
}

/** POST /api/v1/workflow-runs/:id/retry: the same run goes on from the step it stopped at. */
export function retryRun(client: StationClient, runId: string, body: RetryBody = {}): Promise<Run> {
  return client.json("POST", `${runPath(runId)}/retry`, { body, answer: runsAnswers.Run });
}

/** POST /api/v1/workflow-runs/:id/fork: a new run reusing the parent's steps before `from`. */
export function forkRun(client: StationClient, runId: string, body: ForkBody): Promise<Run> {
  return client.json("POST", `${runPath(runId)}/fork`, { body, answer: runsAnswers.Run });
}

/** POST /api/v1/workflow-runs/retry: retries (or, dry_run, lists) the runs a filter matches. */
export function bulkRetryRuns(client: StationClient, body: BulkRetryBody): Promise<BulkRetryResult> {
  return client.json("POST", "/api/v1/workflow-runs/retry", { body, answer: rerunsAnswers.BulkRetryResult });
}

/** POST /api/v1/workflow-runs/:id/eval: an expression's value over the data a step of the run saw. */
export function evalInRun(client: StationClient, runId: string, body: EvalBody): Promise<EvalResult> {
  return client.json("POST", `${runPath(runId)}/eval`, { body, answer: rerunsAnswers.EvalResult });
}

/** GET /api/v1/workflow-approvals */
export async function listApprovals(
  client: StationClient,
  query: { run_id?: string; status?: string } = {},
): Promise<Approval[]> {
  return (await client.json("GET", "/api/v1/workflow-approvals", {
    query,
    answer: approvalsAnswers.ApprovalList,
  })).approvals;
}

/** POST /api/v1/workflow-approvals/:id/approve|reject */
export function decideApproval(
  client: StationClient,
  id: string,
  verb: "approve" | "reject",
  body: DecisionBody,
): Promise<Approval> {
  return client.json("POST", `/api/v1/workflow-approvals/${encodeURIComponent(id)}/${verb}`, {
    body,
    answer: approvalsAnswers.Approval,
  });
}

/**
 * GET /api/v1/workflow-runs/:id/events as an async iterator of events, resuming after `after`
 * (a seq or "now"); ends after the run's terminal event (or when caught up, with follow false).
 */
export function runEvents(
  client: StationClient,
  runId: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<RunEvent> {
  return followRunEvents(client, `${runPath(runId)}/events`, runsAnswers.RunEvent, options);
}

/** Whether a run has ended (completed, failed or canceled). */
export function runEnded(run: Run): boolean {
  return ["completed", "failed", "canceled"].includes(run.status);
}

/** How long waitForRun pauses before following a run's events again after its stream ended early. */
const RESUME_PAUSE_MS = 200;

/**
 * Waits for a run's end by following its event stream; null when the timeout passes (or the signal
 * aborts) first. A dropped connection resumes from the last seq seen (Last-Event-ID semantics).
 */
export async function waitForRun(
  client: StationClient,
  runId: string,
  options: { timeoutMs?: number; signal?: AbortSignal; onEvent?: (e: RunEvent) => void } = {},
): Promise<Run | null> {
  const signals = [
    options.signal,
    options.timeoutMs !== undefined ? AbortSignal.timeout(options.timeoutMs) : undefined,
  ]
    .filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length ? AbortSignal.any(signals) : undefined;
  let after = 0;
  for (;;) {
    try {
      for await (const e of runEvents(client, runId, { after, signal })) {
        after = e.seq;
        options.onEvent?.(e);
      }
      const run = await getRun(client, runId);
      if (runEnded(run)) return run;
    } catch (err) {
      if (signal?.aborted) return null;
      if (err instanceof StationError) throw err;
    }
    // The stream ended before the run did (a dropped connection, a station stopping): resume after a pause,
    // not in a loop that would keep a process busy — or, answered in-process, never yield to its event loop.
    try {
      await sleep(RESUME_PAUSE_MS, signal);
    } catch {
      return null;
    }
  }
}
