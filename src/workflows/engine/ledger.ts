/**
 * Row types of the engine's tables (migrations 0003, 0008): `repository.ts` reads them, `apply.ts` writes
 * them.
 */

import { RunStatus } from "../../contract/runs.ts";
import type { JoinMode } from "../steps/types.ts";

/** The states of a run, as the API contract defines them (one list for the ledger and the API). */
export const RUN_STATUSES = RunStatus.options;
export type { RunStatus };
/** An attempt's states; `waiting_for_concurrency`: its step's concurrency keys are full (flow control). */
export type AttemptStatus =
  | "scheduled"
  | "running"
  | "completed"
  | "failed"
  | "waiting"
  | "waiting_for_concurrency"
  | "canceled";
export const TERMINAL_RUN: readonly RunStatus[] = ["completed", "failed", "canceled"];

/** A step failure as stored and shown: a stable code, a message, and the step path. */
export interface StepError {
  code: string;
  message: string;
  step?: string;
}

export interface RunRow {
  id: string;
  workflow_id: string;
  workflow_version: number | null;
  definition: string;
  status: RunStatus;
  input: string;
  result: string | null;
  error: string | null;
  traceparent: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** The run this one was forked from (migration 0024), and the step it resumed at. */
  parent_run_id?: string | null;
  forked_from?: string | null;
}

/**
 * A run row without its definition, input and result, which can be large: what claims and transitions read of
 * a run on every step (the definition comes from the engine's cache).
 */
export type RunHead = Omit<RunRow, "definition" | "input" | "result">;

/** The columns of a RunHead. */
export const RUN_HEAD_COLUMNS =
  "id, workflow_id, workflow_version, status, error, traceparent, created_at, " +
  "updated_at, started_at, completed_at, parent_run_id, forked_from";

export type ScopeStatus = "pending" | "running" | "completed" | "failed" | "canceled";
export interface ScopeRow {
  run_id: string;
  scope: string;
  parent_attempt: number | null;
  key: string;
  position: number;
  status: ScopeStatus;
  context: string;
  output: string | null;
  error: string | null;
}

export interface AttemptRow {
  id: number;
  run_id: string;
  scope: string;
  path: string;
  step_id: string;
  step_type: string;
  visit: number;
  attempt: number;
  status: AttemptStatus;
  output: string | null;
  error: string | null;
  owner: string | null;
  lease_until: number | null;
  dispatched_at: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** A forked run's step copied as completed: the parent's attempt whose output it reused (migration 0024). */
  reused_from?: number | null;
}

/** What a waiting fan-out parent keeps in its `output` column until its children are joined. */
export interface FanoutMeta {
  join: JoinMode;
  maxConcurrency: number;
}

export type ApprovalStatus = "pending" | "approved" | "rejected" | "timed_out" | "canceled";
export interface ApprovalRow {
  id: string;
  run_id: string;
  attempt_id: number;
  step_id: string;
  message: string;
  approvers: string;
  status: ApprovalStatus;
  decided_by: string | null;
  comment: string | null;
  decided_at: string | null;
  timeout_at: string;
  created_at: string;
}

export type TimerKind = "timer" | "approval_timeout" | "wait_timeout" | "retry" | "step_timeout";
export type TimerStatus = "pending" | "fired" | "canceled";
export interface TimerRow {
  id: number;
  run_id: string;
  attempt_id: number;
  kind: TimerKind;
  fire_at: number;
  status: TimerStatus;
}

export interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  step: string | null;
  data: string | null;
  time: string;
}

/** One row of the `schedules` table: the latest enabled version's cron, and when it fires next. */
export interface ScheduleRow {
  workflow_id: string;
  version: number;
  cron: string;
  timezone: string;
  input: string;
  next_run_at: number;
  last_run_at: number | null;
  last_run_id: string | null;
}

export type WaitStatus = "pending" | "received" | "timed_out" | "canceled";
/** One row of `waits` (migration 0008): an `await` step's durable wait for an event. */
export interface WaitRow {
  attempt_id: number;
  run_id: string;
  path: string;
  event: string;
  match: string | null;
  status: WaitStatus;
  event_id: string | null;
  timeout_at: string | null;
  created_ms: number;
  created_at: string;
  ended_at: string | null;
}

/** One row of `events`: an event sent to everyone, and what it did (JSON lists). */
export interface EventRecordRow {
  id: string;
  name: string;
  data: string;
  source: string;
  received_at: string;
  received_ms: number;
  resumed: string;
  started: string;
}

/** One row of `run_signals`: a signal sent to one run, consumed by a waiting attempt or still kept. */
export interface SignalRow {
  id: number;
  run_id: string;
  signal_id: string;
  name: string;
  data: string;
  received_at: string;
  consumed_by: number | null;
}
