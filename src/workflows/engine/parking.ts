import type { Outcome } from "../steps/types.ts";
import { iso } from "../../lib/clock.ts";
import type { AttemptRow, TimerKind } from "./ledger.ts";
import type { Transition } from "./run_state.ts";

/**
 * How a step parks on a durable wait (pure, part of `transitions.ts`'s rules): a timer, a human
 * approval, or an event. The attempt becomes `waiting`; what ends the wait is a timer row, an
 * approval row or a wait row, each ended once under the ledger's fence.
 */

/** The outcomes that park a step. */
export type Parking = Extract<Outcome, { kind: "sleep" | "approval" | "await" }>;

/** Parks the attempt as the outcome says. */
export function park(t: Transition, a: AttemptRow, outcome: Parking): void {
  switch (outcome.kind) {
    case "sleep":
      wait(t, a, { kind: "timer", fireAt: outcome.until, data: { until: iso(outcome.until) } });
      break;
    case "approval": {
      const approvalId = `appr-${a.run_id}-${a.id}`;
      const timeoutAt = t.env.now + outcome.timeoutMs;
      t.emit({
        kind: "request_approval",
        approvalId,
        runId: a.run_id,
        attemptId: a.id,
        stepId: a.step_id,
        message: outcome.message,
        approvers: outcome.approvers,
        timeoutAt: iso(timeoutAt),
        at: t.at,
      });
      t.event("approval_requested", a.path, {
        approval_id: approvalId,
        message: outcome.message,
        approvers: outcome.approvers,
        timeout_at: iso(timeoutAt),
      });
      wait(t, a, { kind: "approval_timeout", fireAt: timeoutAt, data: { approval_id: approvalId } });
      break;
    }
    case "await": {
      // Like an approval, but ended by an event (or a signal) instead of a person; no timeout: no deadline.
      const timeoutAt = outcome.timeoutMs === null ? null : t.env.now + outcome.timeoutMs;
      t.emit({ kind: "wait_attempt", attemptId: a.id });
      t.emit({
        kind: "request_wait",
        attemptId: a.id,
        runId: a.run_id,
        path: a.path,
        event: outcome.event,
        match: outcome.match,
        timeoutAt: timeoutAt === null ? null : iso(timeoutAt),
        createdMs: t.env.now,
        at: t.at,
      });
      if (timeoutAt !== null) addTimer(t, a.id, "wait_timeout", timeoutAt);
      t.event("step_waiting", a.path, {
        attempt: a.attempt,
        kind: "event",
        event: outcome.event,
        ...(outcome.match ? { match: outcome.match } : {}),
        timeout_at: timeoutAt === null ? null : iso(timeoutAt),
      });
      break;
    }
  }
}

/** A wait's timer (its kind and when it fires) and what its step_waiting event adds. */
interface Wait {
  kind: TimerKind;
  fireAt: number;
  data: Record<string, unknown>;
}

/** Puts a step into `waiting` with a durable timer. */
function wait(t: Transition, a: AttemptRow, { kind, fireAt, data }: Wait): void {
  t.emit({ kind: "wait_attempt", attemptId: a.id });
  addTimer(t, a.id, kind, fireAt);
  t.event("step_waiting", a.path, { attempt: a.attempt, kind, ...data });
}

/** Adds a durable timer for an attempt. */
export function addTimer(t: Transition, attemptId: number, kind: TimerKind, fireAt: number): void {
  t.emit({ kind: "add_timer", runId: t.state.run.id, attemptId, timerKind: kind, fireAt, at: t.at });
}
