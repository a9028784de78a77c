import type { WorkflowDefinition } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import type { FanoutMeta, RunStatus, StepError, TimerKind } from "./ledger.ts";

/**
 * What a transition decided, as data: `transitions.ts` returns a list of these, the repository
 * applies the list in one SQLite transaction, and the engine publishes the `dispatch` ones after
 * the commit. Each command is one write (or, for `dispatch`, one message). Attempts created in the
 * same list are referred to by a negative temporary id until the repository has inserted them.
 * Instants are ms since the epoch (`fireAt`, `leaseUntil`, `dispatchedAt`) or ISO strings (`at`),
 * as the ledger stores them.
 */
export type Command =
  | {
    kind: "create_run";
    runId: string;
    definition: WorkflowDefinition;
    workflowVersion: number | null;
    input: Record<string, unknown>;
    traceparent: string;
    /** The top-level scope's data context. */
    context: Scope;
    /** A fork's parent run and the step it resumes at. */
    parent?: { runId: string; step: string };
    at: string;
  }
  /** A retry: a run that ended failed or canceled is running again, with the (fixed) definition it goes on with. */
  | {
    kind: "reopen_run";
    runId: string;
    definition: WorkflowDefinition;
    workflowVersion: number | null;
    at: string;
  }
  | { kind: "mark_run_started"; runId: string; at: string }
  | { kind: "set_run_status"; runId: string; status: RunStatus; at: string }
  | {
    kind: "finish_run";
    runId: string;
    status: RunStatus;
    result: unknown;
    error: StepError | null;
    at: string;
  }
  | { kind: "append_event"; runId: string; type: string; step: string | null; data?: unknown; at: string }
  | {
    kind: "schedule_attempt";
    /** The temporary (negative) id later commands use for this attempt. */
    ref: number;
    runId: string;
    scope: string;
    path: string;
    stepId: string;
    stepType: string;
    visit: number;
    attempt: number;
    dispatchedAt: number;
    at: string;
  }
  /** A fork's copy of a step its parent completed: inserted completed, with the parent's recorded output. */
  | {
    kind: "reuse_attempt";
    ref: number;
    runId: string;
    path: string;
    stepId: string;
    stepType: string;
    visit: number;
    output: unknown;
    /** The parent's attempt the output comes from. */
    reusedFrom: number;
    at: string;
  }
  | { kind: "claim_attempt"; attemptId: number; owner: string; leaseUntil: number; at: string }
  | { kind: "renew_lease"; attemptId: number; owner: string; leaseUntil: number }
  | { kind: "mark_dispatched"; attemptId: number; dispatchedAt: number }
  | { kind: "complete_attempt"; attemptId: number; output: unknown; at: string }
  | { kind: "fail_attempt"; attemptId: number; error: StepError; at: string }
  | { kind: "cancel_attempt"; attemptId: number; at: string }
  /** Parks an attempt; a fan-out parent keeps how to join its children. */
  | { kind: "wait_attempt"; attemptId: number; fanout?: FanoutMeta }
  /** Schedules a waiting fan-out parent again so its next delivery joins the children. */
  | { kind: "requeue_attempt"; attemptId: number; dispatchedAt: number }
  | { kind: "set_scope_context"; runId: string; scope: string; context: Scope }
  | {
    kind: "insert_scope";
    runId: string;
    scope: string;
    parentAttempt: number;
    key: string;
    position: number;
    context: Scope;
  }
  | { kind: "start_scope"; runId: string; scope: string }
  | {
    kind: "end_scope";
    runId: string;
    scope: string;
    status: "completed" | "failed";
    output: unknown;
    error: StepError | null;
  }
  | { kind: "cancel_scope"; runId: string; scope: string }
  /** Cancels every pending or running scope of a run (the run ended). */
  | { kind: "cancel_open_scopes"; runId: string }
  | { kind: "add_timer"; runId: string; attemptId: number; timerKind: TimerKind; fireAt: number; at: string }
  /** Cancels an attempt's pending timers (only those of `timerKind` when given). */
  | { kind: "cancel_timers"; attemptId: number; timerKind?: TimerKind }
  | { kind: "fire_timer"; timerId: number }
  | {
    kind: "request_approval";
    approvalId: string;
    runId: string;
    attemptId: number;
    stepId: string;
    message: string;
    approvers: string[];
    timeoutAt: string;
    at: string;
  }
  | {
    kind: "decide_approval";
    approvalId: string;
    status: "approved" | "rejected";
    decidedBy: string;
    comment: string | null;
    at: string;
  }
  /** Marks an attempt's pending approval timed out. */
  | { kind: "time_out_approval"; attemptId: number; at: string }
  /** Cancels an attempt's pending approval. */
  | { kind: "cancel_approval"; attemptId: number }
  /** Parks an `await` step's attempt on a durable wait for an event. */
  | {
    kind: "request_wait";
    attemptId: number;
    runId: string;
    path: string;
    event: string;
    match: string | null;
    timeoutAt: string | null;
    /** The clock's reading: only events received from then on are offered to the wait. */
    createdMs: number;
    at: string;
  }
  /** Ends an attempt's pending wait: an event arrived (`eventId`) or its timeout passed. */
  | {
    kind: "end_wait";
    attemptId: number;
    status: "received" | "timed_out";
    eventId: string | null;
    at: string;
  }
  /** Cancels an attempt's pending wait. */
  | { kind: "cancel_wait"; attemptId: number; at: string }
  /** Records an event sent to everyone and what it resumed and started. */
  | {
    kind: "record_event";
    id: string;
    name: string;
    data: unknown;
    source: string;
    receivedMs: number;
    at: string;
    resumed: { run_id: string; step: string }[];
    /** The runs its triggers started, and the triggers that matched but could not start one. */
    started: ({ workflow_id: string; run_id: string } | { workflow_id: string; error: string })[];
  }
  /** Forgets events received before `beforeMs` (the retention window). */
  | { kind: "prune_events"; beforeMs: number }
  /** Records a signal sent to one run: consumed by `consumedBy`, or kept (null) for a later wait. */
  | {
    kind: "record_signal";
    runId: string;
    signalId: string;
    name: string;
    data: unknown;
    consumedBy: number | null;
    at: string;
  }
  /** A kept signal is consumed by a wait that started after it arrived. */
  | { kind: "consume_signal"; signalRowId: number; attemptId: number }
  /** Records the concurrency keys a run holds (`held`) or waits for, with its priority. */
  | {
    kind: "enqueue_concurrency";
    runId: string;
    slots: { key: string; limit: number }[];
    priority: number;
    queuedMs: number;
    held: boolean;
  }
  /** A waiting run now holds its keys. */
  | { kind: "acquire_concurrency"; runId: string }
  /** A run ended (or a step attempt, `runId` = `attempt:<id>`): it holds, waits for and reserves no key any more. */
  | { kind: "release_concurrency"; runId: string }
  /** A step attempt waits for its concurrency keys (admission schedules it again). */
  | { kind: "wait_for_concurrency"; attemptId: number }
  /** A step attempt that waited for its concurrency keys is scheduled again. */
  | { kind: "admit_attempt"; attemptId: number; dispatchedAt: number }
  /** A rate-limited start (`started`, forgetting starts older than `periodMs`) or a waiter's promised instant. */
  | {
    kind: "record_rate";
    key: string;
    holder: string;
    atMs: number;
    status: "started" | "reserved";
    periodMs: number;
  }
  /** After commit: publish "run this attempt now". */
  | { kind: "dispatch"; attemptId: number; runId: string; path: string; attempt: number };

/** One kind of command, by its `kind`. */
export type CommandOf<K extends Command["kind"]> = Extract<Command, { kind: K }>;
