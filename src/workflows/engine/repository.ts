/** The engine's ledger reads, typed (Repository). */

import { type Database, transaction } from "../../db/database.ts";
import { Statements } from "../../db/statements.ts";
import { applyCommands } from "./apply.ts";
import type { Command } from "./commands.ts";
import type { StepMessage } from "./dispatch.ts";
import {
  type ApprovalRow,
  type ApprovalStatus,
  type AttemptRow,
  type EventRecordRow,
  type EventRow,
  RUN_HEAD_COLUMNS,
  type RunHead,
  type RunRow,
  type RunStatus,
  type ScheduleRow,
  type ScopeRow,
  type SignalRow,
  type TimerKind,
  type TimerRow,
  type TimerStatus,
  type WaitRow,
} from "./ledger.ts";
import { ConcurrencyReads } from "./concurrency_reads.ts";
import { StepLimitReads } from "./step_limit_reads.ts";
import { DebounceStore } from "./debounce.ts";
import { SnapshotReads } from "./snapshot_reads.ts";

/**
 * Which runs to list, newest first; `cursor` is the last id of the previous page. Run ids are ULIDs, which
 * sort by creation time, so `minId` (inclusive) and `cursor` (exclusive) also bound the creation time.
 */
export interface RunQuery {
  workflowId?: string;
  status?: RunStatus;
  cursor?: string;
  minId?: string;
  limit: number;
}

/** A pending wait with the data context of its step's scope (what `match` runs over). */
export type WaitCandidate = WaitRow & { context: string };

/** Which events to list, newest first; `cursor` is the last id of the previous page. */
export interface EventQuery {
  name?: string;
  cursor?: string;
  limit: number;
}

/** A page of runs and the cursor of the next one (null on the last page). */
export interface RunPage {
  runs: RunRow[];
  nextCursor: string | null;
}

/**
 * The engine's ledger tables, typed (docs/design/ledger-and-engine.md): with `apply.ts`, which writes the
 * command lists, the only code that runs SQL on them. Reads are grouped per table; every state change is a
 * command list applied by `apply` inside `transaction`.
 */
export class Repository {
  #sql: Statements;
  /** Concurrency and rate keys: how busy each is, who waits (`run_concurrency`, `concurrency_keys`, windows). */
  readonly concurrency: ConcurrencyReads;
  /** Step flow control: what an attempt holds, rate keys' starts (`rate_admissions`). */
  readonly stepLimits: StepLimitReads;
  /** Event starts waiting out a workflow's debounce (`debounced_starts`). */
  readonly debounces: DebounceStore;
  /** Runs as transitions read them. */
  readonly snapshots: SnapshotReads;

  constructor(db: Database) {
    this.#sql = new Statements(db);
    this.concurrency = new ConcurrencyReads(this.#sql);
    this.stepLimits = new StepLimitReads(this.#sql);
    this.debounces = new DebounceStore(this.#sql);
    this.snapshots = new SnapshotReads(this.#sql, this.runs.head);
  }

  /** Runs fn in one write transaction (nested calls use savepoints). */
  transaction<T>(fn: () => T): T {
    return transaction(this.#sql.db, fn);
  }

  /** Applies commands (inside `transaction`): the step messages to publish after commit; `freed` gets keys freed. */
  apply(commands: Command[], freed?: string[]): StepMessage[] {
    return applyCommands(this.#sql, commands, freed);
  }

  readonly runs = {
    /** One run. */
    get: (id: string): RunRow | undefined =>
      this.#sql.get<RunRow>("SELECT * FROM workflow_runs WHERE id = ?", id),
    /** One run without its large columns (definition, input, result): what each step's claim and transition read. */
    head: (id: string): RunHead | undefined =>
      this.#sql.get<RunHead>(`SELECT ${RUN_HEAD_COLUMNS} FROM workflow_runs WHERE id = ?`, id),
    /** The runs forked from a run, oldest first. */
    forks: (parentId: string): RunRow[] =>
      this.#sql.all<RunRow>("SELECT * FROM workflow_runs WHERE parent_run_id = ? ORDER BY id", parentId),
    /**
     * Runs of a workflow that ended in `status` at or after `since` (ISO), oldest first, each with when it was
     * last retried at or after `since` (null when not): what a bulk retry picks from.
     */
    ended: (
      q: { workflowId: string; status: RunStatus; since: string },
    ): (RunRow & { retried_at: string | null })[] =>
      this.#sql.all(
        `SELECT r.*, (SELECT MAX(e.time) FROM run_events e WHERE e.run_id = r.id AND e.type = 'run_retried'
           AND e.time >= ?) AS retried_at
         FROM workflow_runs r WHERE r.workflow_id = ? AND r.status = ? AND r.completed_at >= ? ORDER BY r.id`,
        q.since,
        q.workflowId,
        q.status,
        q.since,
      ),
    /** A page of runs, newest first. */
    list: (q: RunQuery): RunPage => {
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.workflowId) where.push("workflow_id = ?"), params.push(q.workflowId);
      if (q.status) where.push("status = ?"), params.push(q.status);
      if (q.cursor) where.push("id < ?"), params.push(q.cursor);
      if (q.minId) where.push("id >= ?"), params.push(q.minId);
      const rows = this.#sql.all<RunRow>(
        `SELECT * FROM workflow_runs ${
          where.length ? "WHERE " + where.join(" AND ") : ""
        } ORDER BY id DESC LIMIT ?`,
        ...params,
        q.limit + 1,
      );
      const runs = rows.slice(0, q.limit);
      return { runs, nextCursor: rows.length > q.limit ? runs[runs.length - 1].id : null };
    },
  };

  readonly attempts = {
    /** One attempt. */
    get: (id: number): AttemptRow | undefined =>
      this.#sql.get<AttemptRow>("SELECT * FROM step_attempts WHERE id = ?", id),
    /** Every attempt of a run, oldest first. */
    list: (runId: string): AttemptRow[] =>
      this.#sql.all<AttemptRow>("SELECT * FROM step_attempts WHERE run_id = ? ORDER BY id", runId),
    /**
     * Attempts of active, unpaused runs whose message may be lost (scheduled and dispatched at or
     * before `dispatchedBy`) or whose claim lapsed (running with a lease before `leaseBefore`).
     */
    lost: (dispatchedBy: number, leaseBefore: number): (AttemptRow & { traceparent: string | null })[] =>
      this.#sql.all(
        `SELECT a.*, r.traceparent FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
         WHERE r.status NOT IN ('paused','completed','failed','canceled')
           AND ((a.status = 'scheduled' AND a.dispatched_at <= ?)
             OR (a.status = 'running' AND a.lease_until < ?))`,
        dispatchedBy,
        leaseBefore,
      ),
  };

  readonly scopes = {
    /** One scope of a run ('' is the top level). */
    get: (runId: string, scope: string): ScopeRow | undefined =>
      this.#sql.get<ScopeRow>("SELECT * FROM run_scopes WHERE run_id = ? AND scope = ?", runId, scope),
    /** The child scopes of a fanout attempt, in position order. */
    children: (parentAttempt: number): ScopeRow[] =>
      this.#sql.all<ScopeRow>(
        "SELECT * FROM run_scopes WHERE parent_attempt = ? ORDER BY position",
        parentAttempt,
      ),
  };

  readonly events = {
    /** Events of a run after a seq, oldest first. */
    after: (runId: string, after: number, limit = 500): EventRow[] =>
      this.#sql.all<EventRow>(
        "SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        runId,
        after,
        limit,
      ),
    /** The highest seq of a run's log (0 when empty). */
    lastSeq: (runId: string): number =>
      this.#sql.get<{ s: number }>(
        "SELECT COALESCE(MAX(seq), 0) AS s FROM run_events WHERE run_id = ?",
        runId,
      )!.s,
  };

  readonly approvals = {
    /** One approval. */
    get: (id: string): ApprovalRow | undefined =>
      this.#sql.get<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", id),
    /** Approvals, oldest first, optionally of one run and/or in one status. */
    list: (q: { runId?: string; status?: ApprovalStatus } = {}): ApprovalRow[] =>
      this.#sql.all<ApprovalRow>(
        `SELECT * FROM approvals WHERE (? IS NULL OR run_id = ?) AND (? IS NULL OR status = ?) ORDER BY created_at`,
        q.runId ?? null,
        q.runId ?? null,
        q.status ?? null,
        q.status ?? null,
      ),
    /** Whether an attempt has a pending approval. */
    pendingFor: (attemptId: number): boolean =>
      !!this.#sql.get("SELECT 1 FROM approvals WHERE attempt_id = ? AND status = 'pending'", attemptId),
  };

  readonly timers = {
    /** One timer. */
    get: (id: number): TimerRow | undefined =>
      this.#sql.get<TimerRow>("SELECT * FROM timers WHERE id = ?", id),
    /** A run's timers in creation order, optionally of one kind and/or status. */
    list: (q: { runId: string; kind?: TimerKind; status?: TimerStatus }): TimerRow[] =>
      this.#sql.all<TimerRow>(
        `SELECT id, run_id, attempt_id, kind, fire_at, status FROM timers
         WHERE run_id = ? AND (? IS NULL OR kind = ?) AND (? IS NULL OR status = ?) ORDER BY id`,
        q.runId,
        q.kind ?? null,
        q.kind ?? null,
        q.status ?? null,
        q.status ?? null,
      ),
    /** Pending timers due at `now`, earliest first (at most 100). */
    due: (now: number): TimerRow[] =>
      this.#sql.all<TimerRow>(
        "SELECT * FROM timers WHERE status = 'pending' AND fire_at <= ? ORDER BY fire_at LIMIT 100",
        now,
      ),
    /**
     * When the earliest pending timer fires (null when none is pending): a timer row, a debounced start, or a
     * rate-limit admission leaving its window (runs may wait for it).
     */
    nextFireAt: (): number | null =>
      this.#sql.get<{ f: number | null }>(
        `SELECT MIN(f) AS f FROM (SELECT MIN(fire_at) AS f FROM timers WHERE status = 'pending'
         UNION ALL SELECT MIN(fire_ms) FROM debounced_starts UNION ALL SELECT MIN(until_ms) FROM run_rate_windows)`,
      )!.f,
    /** Whether an attempt waits out a retry backoff. */
    retryPending: (attemptId: number): boolean =>
      !!this.#sql.get(
        "SELECT 1 FROM timers WHERE attempt_id = ? AND kind = 'retry' AND status = 'pending'",
        attemptId,
      ),
  };

  readonly waits = {
    /** One attempt's wait. */
    get: (attemptId: number): WaitRow | undefined =>
      this.#sql.get<WaitRow>("SELECT * FROM waits WHERE attempt_id = ?", attemptId),
    /**
     * Pending waits for an event name that started at or before `receivedMs`, optionally of one run,
     * oldest first, with their scope's context.
     */
    candidates: (event: string, receivedMs: number, runId?: string): WaitCandidate[] =>
      this.#sql.all<WaitCandidate>(
        `SELECT w.*, s.context FROM waits w JOIN step_attempts a ON a.id = w.attempt_id
           JOIN run_scopes s ON s.run_id = w.run_id AND s.scope = a.scope
         WHERE w.event = ? AND w.status = 'pending' AND w.created_ms <= ? AND (? IS NULL OR w.run_id = ?)
         ORDER BY w.attempt_id`,
        event,
        receivedMs,
        runId ?? null,
        runId ?? null,
      ),
    /** Pending waits whose run holds a kept signal of their event name (offered again at start). */
    withKeptSignals: (): WaitRow[] =>
      this.#sql.all<WaitRow>(
        `SELECT DISTINCT w.* FROM waits w JOIN run_signals g ON g.run_id = w.run_id AND g.name = w.event
         WHERE w.status = 'pending' AND g.consumed_by IS NULL`,
      ),
    /** A run's waits, oldest first. */
    ofRun: (runId: string): WaitRow[] =>
      this.#sql.all<WaitRow>("SELECT * FROM waits WHERE run_id = ? ORDER BY attempt_id", runId),
  };

  readonly signals = {
    /** One signal. */
    get: (id: number): SignalRow | undefined =>
      this.#sql.get<SignalRow>("SELECT * FROM run_signals WHERE id = ?", id),
    /** A run's signals of one name not consumed yet, oldest first. */
    kept: (runId: string, name: string): SignalRow[] =>
      this.#sql.all<SignalRow>(
        "SELECT * FROM run_signals WHERE run_id = ? AND name = ? AND consumed_by IS NULL ORDER BY id",
        runId,
        name,
      ),
    /** Every signal of a run, oldest first. */
    list: (runId: string): SignalRow[] =>
      this.#sql.all<SignalRow>("SELECT * FROM run_signals WHERE run_id = ? ORDER BY id", runId),
    /** The signal a run already received with this id. */
    byId: (runId: string, signalId: string): SignalRow | undefined =>
      this.#sql.get<SignalRow>(
        "SELECT * FROM run_signals WHERE run_id = ? AND signal_id = ?",
        runId,
        signalId,
      ),
  };

  readonly eventLog = {
    /** One recorded event. */
    get: (id: string): EventRecordRow | undefined =>
      this.#sql.get<EventRecordRow>("SELECT * FROM events WHERE id = ?", id),
    /** A page of events, newest first. */
    list: (q: EventQuery): { events: EventRecordRow[]; nextCursor: string | null } => {
      const rows = this.#sql.all<EventRecordRow>(
        `SELECT * FROM events WHERE (? IS NULL OR name = ?) AND (? IS NULL OR rowid < (SELECT rowid FROM events
           WHERE id = ?)) ORDER BY rowid DESC LIMIT ?`,
        q.name ?? null,
        q.name ?? null,
        q.cursor ?? null,
        q.cursor ?? null,
        q.limit + 1,
      );
      const events = rows.slice(0, q.limit);
      return { events, nextCursor: rows.length > q.limit ? events[events.length - 1].id : null };
    },
  };

  readonly schedules = {
    /** Every schedule. */
    all: (): ScheduleRow[] => this.#sql.all<ScheduleRow>("SELECT * FROM schedules"),
    /** Schedules due at `now`. */
    due: (now: number): ScheduleRow[] =>
      this.#sql.all<ScheduleRow>("SELECT * FROM schedules WHERE next_run_at <= ?", now),
    /** Drops a workflow's schedule. */
    delete: (workflowId: string): void => {
      this.#sql.run("DELETE FROM schedules WHERE workflow_id = ?", workflowId);
    },
    /** Creates or replaces a workflow's schedule. */
    put: (row: Omit<ScheduleRow, "last_run_at" | "last_run_id">): void => {
      this.#sql.run(
        `INSERT INTO schedules (workflow_id, version, cron, timezone, input, next_run_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (workflow_id) DO UPDATE SET version = excluded.version, cron = excluded.cron,
           timezone = excluded.timezone, input = excluded.input, next_run_at = excluded.next_run_at`,
        row.workflow_id,
        row.version,
        row.cron,
        row.timezone,
        row.input,
        row.next_run_at,
      );
    },
    /**
     * Moves a due schedule on to `next` if it is still due at `due` (compare-and-set, so one
     * process wins a fire); true when this call won.
     */
    advance: (workflowId: string, due: number, next: number, now: number): boolean =>
      this.#sql.run(
        "UPDATE schedules SET next_run_at = ?, last_run_at = ? WHERE workflow_id = ? AND next_run_at = ?",
        next,
        now,
        workflowId,
        due,
      ) > 0,
    /** Records the run a schedule started. */
    setLastRun: (workflowId: string, runId: string): void => {
      this.#sql.run("UPDATE schedules SET last_run_id = ? WHERE workflow_id = ?", runId, workflowId);
    },
  };
}
