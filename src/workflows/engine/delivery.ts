import { StationError } from "../../errors.ts";
import type { ReceivedEvent } from "../steps/types.ts";
import type { Command } from "./commands.ts";
import { TERMINAL_RUN } from "./ledger.ts";
import { type RunState, Transition, type TransitionEnv } from "./run_state.ts";
import { type Prepared, settleIn } from "./transitions.ts";

/**
 * How an event ends a waiting `await` step, as pure functions (the rules; `signals.ts` reads the
 * ledger, evaluates `match` and applies the commands in one transaction). A wait ends once: the
 * fence is its `pending` row and its attempt still `waiting` in an active run.
 */

/** An event offered to one waiting attempt whose `match` held. */
export interface Delivery {
  attemptId: number;
  /** The attempt's wait is still pending (read in the transaction). */
  waitPending: boolean;
  event: ReceivedEvent;
  /** The step's outcome for this event, through the data flow. */
  prepared: Prepared;
}

/** Whether the delivery still finds its step waiting (the fence). */
function accepts(t: Transition, d: Delivery): boolean {
  const a = t.state.attempts.get(d.attemptId);
  return d.waitPending && a?.status === "waiting" && !TERMINAL_RUN.includes(t.state.run.status);
}

/** Ends the wait with the event and continues the step; false (nothing emitted) when the fence refuses. */
export function deliverIn(t: Transition, d: Delivery): boolean {
  if (!accepts(t, d)) return false;
  const a = t.state.attempts.get(d.attemptId)!;
  t.emit({ kind: "end_wait", attemptId: a.id, status: "received", eventId: d.event.id, at: t.at });
  t.emit({ kind: "cancel_timers", attemptId: a.id, timerKind: "wait_timeout" });
  t.event("event_received", a.path, { name: d.event.name, id: d.event.id });
  settleIn(t, { attemptId: a.id, from: "waiting", prepared: d.prepared });
  return true;
}

/** A signal sent to one run. */
export interface SignalInput {
  event: ReceivedEvent;
  /** The waiting step that accepted it, when one did. */
  delivery?: Delivery;
}

/**
 * Records a signal on its run: delivered to the waiting step that accepted it, else kept for a step
 * that waits for its name later. A finished run is a 409.
 */
export function signalRun(
  state: RunState,
  input: SignalInput,
  env: TransitionEnv,
): { commands: Command[]; deliveredTo: string | null } {
  const run = state.run;
  if (TERMINAL_RUN.includes(run.status)) {
    throw new StationError("run_finished", `run ${run.id} already ${run.status}`, {
      status: 409,
      hint: "a signal reaches only a run that has not ended",
    });
  }
  const t = new Transition(state, env);
  const { event, delivery } = input;
  const target = delivery && accepts(t, delivery) ? t.state.attempts.get(delivery.attemptId)! : undefined;
  t.emit({
    kind: "record_signal",
    runId: run.id,
    signalId: event.id,
    name: event.name,
    data: event.data,
    consumedBy: target?.id ?? null,
    at: event.received_at,
  });
  t.event("signal_received", null, {
    name: event.name,
    id: event.id,
    data: event.data,
    delivered_to: target?.path ?? null,
  });
  if (target) deliverIn(t, delivery!);
  return { commands: t.commands, deliveredTo: target?.path ?? null };
}

/** A kept signal offered to a wait that started after it arrived; nothing when either is gone. */
export function consumeKept(
  state: RunState,
  input: { signalRowId: number; signalKept: boolean; delivery: Delivery },
  env: TransitionEnv,
): Command[] {
  const t = new Transition(state, env);
  if (!input.signalKept || !accepts(t, input.delivery)) return [];
  t.emit({ kind: "consume_signal", signalRowId: input.signalRowId, attemptId: input.delivery.attemptId });
  deliverIn(t, input.delivery);
  return t.commands;
}
