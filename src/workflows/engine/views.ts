import type {
  ApprovalRow,
  AttemptRow,
  EventRecordRow,
  RunRow,
  RunStatus,
  SignalRow,
  StepError,
} from "./ledger.ts";
import { traceIdOf } from "../../telemetry/tracing.ts";

/** API shapes of the ledger rows (JSON columns parsed, internal columns left out). */

const parse = (s: string | null) => (s === null ? null : JSON.parse(s));

export interface RunView {
  run_id: string;
  /** Deprecated: the same as run_id, kept for scripts that read it. */
  id: string;
  workflow_id: string;
  workflow_version: number | null;
  status: RunStatus;
  input: unknown;
  result: unknown;
  error: StepError | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** The trace its spans belong to (from the stored traceparent), to look it up in a tracing backend. */
  trace_id: string | null;
  /** A fork's parent run and the step it resumed at (null for a run that was not forked). */
  parent_run_id: string | null;
  forked_from: string | null;
}

/** A run as the API returns it. */
export function runView(r: RunRow): RunView {
  return {
    run_id: r.id,
    id: r.id,
    workflow_id: r.workflow_id,
    workflow_version: r.workflow_version,
    status: r.status,
    input: parse(r.input),
    result: parse(r.result),
    error: parse(r.error),
    created_at: r.created_at,
    updated_at: r.updated_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
    trace_id: traceIdOf(r.traceparent),
    parent_run_id: r.parent_run_id ?? null,
    forked_from: r.forked_from ?? null,
  };
}

export interface StepView {
  path: string;
  step_id: string;
  type: string;
  visit: number;
  attempt: number;
  status: string;
  output: unknown;
  error: StepError | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  /** Copied from the parent run by a fork, never executed in this run. */
  reused: boolean;
  /** The parent run's attempt whose recorded output a reused step carries. */
  reused_from: ReusedFrom | null;
}

/** Where a reused step's output was recorded: the parent run's attempt. */
export type ReusedFrom = Pick<AttemptRow, "run_id" | "path" | "visit" | "attempt">;

/**
 * A step attempt as the API returns it; only a completed step has an output (the rest is bookkeeping). A
 * reused step names its parent's attempt when `parentAttempt` finds it.
 */
export function stepView(a: AttemptRow, parentAttempt?: (id: number) => AttemptRow | undefined): StepView {
  const from = a.reused_from != null ? parentAttempt?.(a.reused_from) : undefined;
  return {
    path: a.path,
    step_id: a.step_id,
    type: a.step_type,
    visit: a.visit,
    attempt: a.attempt,
    status: a.status,
    output: a.status === "completed" ? parse(a.output) : null,
    error: parse(a.error),
    created_at: a.created_at,
    started_at: a.started_at,
    completed_at: a.completed_at,
    duration_ms: a.started_at && a.completed_at
      ? Date.parse(a.completed_at) - Date.parse(a.started_at)
      : null,
    reused: a.reused_from != null,
    reused_from: from
      ? { run_id: from.run_id, path: from.path, visit: from.visit, attempt: from.attempt }
      : null,
  };
}

export interface ApprovalView {
  id: string;
  run_id: string;
  step_id: string;
  message: string;
  approvers: string[];
  status: ApprovalRow["status"];
  decided_by: string | null;
  comment: string | null;
  decided_at: string | null;
  timeout_at: string;
  created_at: string;
}

/** An approval as the API returns it. */
export function approvalView(a: ApprovalRow): ApprovalView {
  return {
    id: a.id,
    run_id: a.run_id,
    step_id: a.step_id,
    message: a.message,
    approvers: JSON.parse(a.approvers),
    status: a.status,
    decided_by: a.decided_by,
    comment: a.comment,
    decided_at: a.decided_at,
    timeout_at: a.timeout_at,
    created_at: a.created_at,
  };
}

/** An event as the API returns it. */
export function eventView(e: EventRecordRow) {
  return {
    id: e.id,
    name: e.name,
    data: parse(e.data),
    source: e.source,
    received_at: e.received_at,
    resumed: parse(e.resumed),
    started: parse(e.started),
  };
}

/** A signal as the API returns it, with the step that received it (null while kept). */
export function signalView(s: SignalRow, deliveredTo: string | null) {
  return {
    id: s.signal_id,
    name: s.name,
    data: parse(s.data),
    received_at: s.received_at,
    delivered_to: deliveredTo,
  };
}
