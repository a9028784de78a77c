import type { Database } from "../../db/database.ts";

/**
 * Row types and queries of the engine's tables (migration 0003). Functions here never decide
 * anything; the engine calls them inside its transactions.
 */

export const RUN_STATUSES = [
  "pending",
  "running",
  "waiting",
  "paused",
  "completed",
  "failed",
  "canceled",
] as const;
export type RunStatus = typeof RUN_STATUSES[number];
export type AttemptStatus = "scheduled" | "running" | "completed" | "failed" | "waiting" | "canceled";
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
}

export interface ScopeRow {
  run_id: string;
  scope: string;
  parent_attempt: number | null;
  key: string;
  position: number;
  status: "pending" | "running" | "completed" | "failed" | "canceled";
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
}

export interface ApprovalRow {
  id: string;
  run_id: string;
  attempt_id: number;
  step_id: string;
  message: string;
  approvers: string;
  status: "pending" | "approved" | "rejected" | "timed_out" | "canceled";
  decided_by: string | null;
  comment: string | null;
  decided_at: string | null;
  timeout_at: string;
  created_at: string;
}

export type TimerKind = "timer" | "approval_timeout" | "retry" | "step_timeout";
export interface TimerRow {
  id: number;
  run_id: string;
  attempt_id: number;
  kind: TimerKind;
  fire_at: number;
  status: "pending" | "fired" | "canceled";
}

export interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  step: string | null;
  data: string | null;
  time: string;
}

/** The current time as stored in the ledger. */
export const now = () => new Date().toISOString();

/** Prepared statements over one database connection (prepared once; the engine's hot path uses them). */
export class Ledger {
  readonly db: Database;
  #stmts = new Map<string, ReturnType<Database["prepare"]>>();

  constructor(db: Database) {
    this.db = db;
  }

  #q(sql: string) {
    let s = this.#stmts.get(sql);
    if (!s) this.#stmts.set(sql, s = this.db.prepare(sql));
    return s;
  }

  /** Runs a statement; returns the number of rows changed. */
  run(sql: string, ...params: unknown[]): number {
    return Number(this.#q(sql).run(...(params as never[])).changes);
  }

  /** Inserts a row and returns its rowid. */
  insert(sql: string, ...params: unknown[]): number {
    return Number(this.#q(sql).run(...(params as never[])).lastInsertRowid);
  }

  /** One row or undefined. */
  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.#q(sql).get(...(params as never[])) as T | undefined;
  }

  /** All rows. */
  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.#q(sql).all(...(params as never[])) as T[];
  }

  /** Reads a run. */
  getRun(id: string): RunRow | undefined {
    return this.get<RunRow>("SELECT * FROM workflow_runs WHERE id = ?", id);
  }

  /** Reads an attempt. */
  getAttempt(id: number): AttemptRow | undefined {
    return this.get<AttemptRow>("SELECT * FROM step_attempts WHERE id = ?", id);
  }

  /** Reads a scope. */
  getScope(runId: string, scope: string): ScopeRow | undefined {
    return this.get<ScopeRow>("SELECT * FROM run_scopes WHERE run_id = ? AND scope = ?", runId, scope);
  }

  /** Appends an event to the run's log with the next seq; returns the seq. */
  appendEvent(runId: string, type: string, step: string | null, data?: unknown): number {
    const row = this.get<{ seq: number }>(
      "SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM run_events WHERE run_id = ?",
      runId,
    )!;
    this.run(
      "INSERT INTO run_events (run_id, seq, type, step, data, time) VALUES (?, ?, ?, ?, ?, ?)",
      runId,
      row.seq,
      type,
      step,
      data === undefined ? null : JSON.stringify(data),
      now(),
    );
    return row.seq;
  }

  /** Events of a run after a seq, oldest first. */
  eventsAfter(runId: string, after: number, limit = 500): EventRow[] {
    return this.all<EventRow>(
      "SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      runId,
      after,
      limit,
    );
  }

  /** The highest seq of a run's log (0 when empty). */
  lastSeq(runId: string): number {
    return this.get<{ s: number }>(
      "SELECT COALESCE(MAX(seq), 0) AS s FROM run_events WHERE run_id = ?",
      runId,
    )!.s;
  }

  /** Sets a run's status (and updated_at). */
  setRunStatus(runId: string, status: RunStatus): void {
    this.run("UPDATE workflow_runs SET status = ?, updated_at = ? WHERE id = ?", status, now(), runId);
  }

  /** Attempts of a run that are not finished. */
  activeAttempts(runId: string): AttemptRow[] {
    return this.all<AttemptRow>(
      "SELECT * FROM step_attempts WHERE run_id = ? AND status IN ('scheduled','running','waiting')",
      runId,
    );
  }
}
