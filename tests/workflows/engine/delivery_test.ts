/**
 * The rules of waiting for events without I/O (delivery.ts, and the await parts of transitions.ts and
 * fencing.ts): run state in, commands out. Each wait ends once whatever arrives twice or races.
 */
import { StationError } from "../../../src/errors.ts";
import { iso } from "../../../src/lib/clock.ts";
import type { Command, CommandOf } from "../../../src/workflows/engine/commands.ts";
import { consumeKept, deliverIn, type Delivery, signalRun } from "../../../src/workflows/engine/delivery.ts";
import { cancelRun, fireTimer, timerOutcome } from "../../../src/workflows/engine/fencing.ts";
import {
  type AttemptRow,
  type AttemptStatus,
  RUN_STATUSES,
  type RunRow,
  type RunStatus,
  TERMINAL_RUN,
} from "../../../src/workflows/engine/ledger.ts";
import { type RunState, Transition, type TransitionEnv } from "../../../src/workflows/engine/run_state.ts";
import { settle } from "../../../src/workflows/engine/transitions.ts";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";
import { def } from "../helpers.ts";

const NOW = Date.UTC(2026, 0, 1, 12);
const env: TransitionEnv = {
  now: NOW,
  owner: "me",
  leaseMs: 15_000,
  defaultTimeoutMs: 300_000,
  random: () => 0.5,
};
const flow = def({
  id: "flow",
  states: [
    { id: "w", type: "await", event: "go", timeout: "1m", onTimeout: "late", next: "after" },
    { id: "after", type: "transform", expression: "1" },
    { id: "late", type: "transform", expression: "0" },
  ],
});
const waitState = flow.states[0];
const ev = { name: "go", id: "e1", data: { n: 1 }, received_at: iso(NOW) };

function state(runStatus: RunStatus, status: AttemptStatus): RunState {
  const run: RunRow = {
    id: "r1",
    workflow_id: "flow",
    workflow_version: 1,
    definition: "",
    status: runStatus,
    input: "{}",
    result: null,
    error: null,
    traceparent: null,
    created_at: iso(NOW - 1000),
    updated_at: iso(NOW - 1000),
    started_at: iso(NOW - 1000),
    completed_at: null,
  };
  const a: AttemptRow = {
    id: 1,
    run_id: "r1",
    scope: "",
    path: "w",
    step_id: "w",
    step_type: "await",
    visit: 1,
    attempt: 1,
    status,
    output: null,
    error: null,
    owner: status === "running" ? "me" : null,
    lease_until: NOW + 10_000,
    dispatched_at: NOW - 500,
    created_at: iso(NOW - 1000),
    started_at: iso(NOW - 900),
    completed_at: null,
  };
  return {
    run,
    definition: flow,
    attempts: new Map([[1, a]]),
    scopes: new Map([["", {
      run_id: "r1",
      scope: "",
      parent_attempt: null,
      key: "",
      position: 0,
      status: "running",
    }]]),
    lastVisit: () => 1,
  };
}

const delivery = (waitPending = true): Delivery => ({
  attemptId: 1,
  waitPending,
  event: ev,
  prepared: { outcome: { kind: "completed", output: ev }, state: waitState, context: { w: ev } },
});
const kinds = (cs: Command[]) => cs.map((c) => c.kind);
const events = (cs: Command[]) =>
  cs.filter((c): c is CommandOf<"append_event"> => c.kind === "append_event").map((c) => c.type);

Deno.test("await: the step parks on a wait row with a wait_timeout timer (none without a timeout)", () => {
  const outcome = { kind: "await" as const, event: "go", match: "x = 1", timeoutMs: 60_000 };
  const cs = settle(state("running", "running"), {
    attemptId: 1,
    from: "running",
    prepared: { outcome, state: waitState },
  }, env);
  assertEquals(kinds(cs).slice(0, 3), ["wait_attempt", "request_wait", "add_timer"]);
  const req = cs.find((c): c is CommandOf<"request_wait"> => c.kind === "request_wait")!;
  assertEquals([req.event, req.match, req.timeoutAt, req.createdMs], ["go", "x = 1", iso(NOW + 60_000), NOW]);
  assertEquals(
    cs.find((c): c is CommandOf<"add_timer"> => c.kind === "add_timer")!.timerKind,
    "wait_timeout",
  );
  assert(events(cs).includes("step_waiting") && events(cs).includes("run_status"));
  const forever = settle(state("running", "running"), {
    attemptId: 1,
    from: "running",
    prepared: { outcome: { ...outcome, timeoutMs: null }, state: waitState },
  }, env);
  assert(!kinds(forever).includes("add_timer"));
});

Deno.test("deliver: only a pending wait of a waiting attempt in an active run ends, once", () => {
  for (const runStatus of RUN_STATUSES) {
    for (const status of ["scheduled", "running", "waiting", "completed", "canceled"] as AttemptStatus[]) {
      for (const pending of [true, false]) {
        const t = new Transition(state(runStatus, status), env);
        const ok = deliverIn(t, delivery(pending));
        const want = pending && status === "waiting" && !TERMINAL_RUN.includes(runStatus);
        assertEquals(ok, want, `${runStatus} × ${status} × pending ${pending}`);
        if (!ok) {
          assertEquals(t.commands, []);
          continue;
        }
        assertEquals(kinds(t.commands).slice(0, 3), ["end_wait", "cancel_timers", "append_event"]);
        assert(kinds(t.commands).includes("complete_attempt"));
        // The same delivery again, on the state it left, is refused: the attempt is no longer waiting.
        assertEquals(deliverIn(t, delivery(true)), false);
      }
    }
  }
});

Deno.test("signal: delivered when the step takes it, else kept; a finished run is a 409", () => {
  const taken = signalRun(state("waiting", "waiting"), { event: ev, delivery: delivery() }, env);
  assertEquals(taken.deliveredTo, "w");
  const rec = taken.commands.find((c): c is CommandOf<"record_signal"> => c.kind === "record_signal")!;
  assertEquals([rec.signalId, rec.consumedBy], ["e1", 1]);
  assertEquals(events(taken.commands).slice(0, 3), ["signal_received", "event_received", "step_completed"]);
  for (const d of [undefined, delivery(false)]) {
    const kept = signalRun(state("waiting", "waiting"), { event: ev, delivery: d }, env);
    assertEquals(kept.deliveredTo, null);
    assertEquals(kinds(kept.commands), ["record_signal", "append_event"]);
  }
  for (const status of TERMINAL_RUN) {
    const e = assertThrows(() => signalRun(state(status, "canceled"), { event: ev }, env), StationError);
    assertEquals((e as StationError).code, "run_finished");
  }
});

Deno.test("kept signal: consumed by one wait; a signal already consumed or a wait already ended does nothing", () => {
  const cs = consumeKept(state("waiting", "waiting"), {
    signalRowId: 9,
    signalKept: true,
    delivery: delivery(),
  }, env);
  assertEquals(kinds(cs).slice(0, 2), ["consume_signal", "end_wait"]);
  assertEquals(
    consumeKept(
      state("waiting", "waiting"),
      { signalRowId: 9, signalKept: false, delivery: delivery() },
      env,
    ),
    [],
  );
  assertEquals(
    consumeKept(
      state("waiting", "waiting"),
      { signalRowId: 9, signalKept: true, delivery: delivery(false) },
      env,
    ),
    [],
  );
});

Deno.test("wait timeout: routes to onTimeout once; a wait already ended only marks its timer fired", () => {
  const timer = {
    id: 5,
    run_id: "r1",
    attempt_id: 1,
    kind: "wait_timeout" as const,
    fire_at: NOW,
    status: "pending" as const,
  };
  const outcome = timerOutcome(timer, waitState, NOW)!;
  assertEquals(outcome, { kind: "completed", output: { timed_out: true, at: iso(NOW) }, next: "late" });
  const prepared = { outcome, state: waitState, context: {} };
  const fired = fireTimer(state("waiting", "waiting"), {
    timer,
    approvalPending: false,
    waitPending: true,
    prepared,
  }, env);
  assertEquals(kinds(fired).slice(0, 2), ["fire_timer", "end_wait"]);
  assert(events(fired).includes("wait_timed_out"));
  const schedule = fired.find((c): c is CommandOf<"schedule_attempt"> => c.kind === "schedule_attempt")!;
  assertEquals(schedule.stepId, "late");
  const late = fireTimer(state("waiting", "completed"), {
    timer,
    approvalPending: false,
    waitPending: false,
    prepared,
  }, env);
  assertEquals(kinds(late), ["fire_timer"]);
});

Deno.test("cancel: a waiting await's wait is canceled with its attempt", () => {
  const cs = cancelRun(state("waiting", "waiting"), "stop", env);
  assert(kinds(cs).includes("cancel_wait"), kinds(cs).join(" "));
});
