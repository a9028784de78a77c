/**
 * The engine's rules without I/O: run state in, commands out (transitions.ts, fencing.ts). No
 * SQLite, no NATS, no timers; the clock is a number and the backoff jitter a constant.
 */
import { StationError } from "../../../src/errors.ts";
import type { State } from "../../../src/workflows/definition/schema.ts";
import type { Outcome } from "../../../src/workflows/steps/types.ts";
import { backoff } from "../../../src/workflows/engine/blocks.ts";
import { iso } from "../../../src/lib/clock.ts";
import type { Command, CommandOf } from "../../../src/workflows/engine/commands.ts";
import {
  cancelRun,
  claim,
  decideApproval,
  decisionOutcome,
  expireUnserved,
  fireTimer,
  pauseRun,
  resumeRun,
  timerOutcome,
} from "../../../src/workflows/engine/fencing.ts";
import {
  type ApprovalRow,
  type AttemptRow,
  type AttemptStatus,
  RUN_STATUSES,
  type RunRow,
  type RunStatus,
  TERMINAL_RUN,
  type TimerRow,
} from "../../../src/workflows/engine/ledger.ts";
import type { RunState, ScopeState, TransitionEnv } from "../../../src/workflows/engine/run_state.ts";
import { createRun, type Prepared, settle } from "../../../src/workflows/engine/transitions.ts";
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
const ATTEMPT_STATUSES: AttemptStatus[] = [
  "scheduled",
  "running",
  "completed",
  "failed",
  "waiting",
  "canceled",
];

const chain = def({
  id: "chain",
  outputSchema: { type: "object", required: ["ok"] },
  states: [
    {
      id: "a",
      type: "transform",
      expression: "1",
      next: "b",
      retry: { max_attempts: 3, initial_interval: "1s", non_retryable: ["fatal"] },
    },
    { id: "b", type: "transform", expression: "2" },
  ],
});
const fan = def({
  id: "fan",
  states: [{
    id: "p",
    type: "parallel",
    branches: [
      { name: "x", states: [{ id: "x1", type: "transform", expression: "1" }] },
      { name: "y", states: [{ id: "y1", type: "transform", expression: "2" }] },
    ],
  }],
});
const asking = def({
  id: "asking",
  states: [
    { id: "ask", type: "human_approval", message: "ok?", onReject: "no", next: "yes" },
    { id: "yes", type: "transform", expression: "1" },
    { id: "no", type: "transform", expression: "0" },
  ],
});

function runRow(status: RunStatus, started = status !== "pending"): RunRow {
  return {
    id: "r1",
    workflow_id: "wf",
    workflow_version: 1,
    definition: "",
    status,
    input: "{}",
    result: null,
    error: null,
    traceparent: null,
    created_at: iso(NOW - 1000),
    updated_at: iso(NOW - 1000),
    started_at: started ? iso(NOW - 1000) : null,
    completed_at: null,
  };
}

function attemptRow(id: number, over: Partial<AttemptRow> = {}): AttemptRow {
  const stepId = over.step_id ?? "a";
  const scope = over.scope ?? "";
  return {
    id,
    run_id: "r1",
    scope,
    path: scope === "" ? stepId : `${scope}/${stepId}`,
    step_id: stepId,
    step_type: "transform",
    visit: 1,
    attempt: 1,
    status: "running",
    output: null,
    error: null,
    owner: "me",
    lease_until: NOW + 10_000,
    dispatched_at: NOW - 500,
    created_at: iso(NOW - 1000),
    started_at: iso(NOW - 900),
    completed_at: null,
    ...over,
  };
}

function runState(
  definition: RunState["definition"],
  run: RunRow,
  attempts: AttemptRow[],
  scopes: Omit<ScopeState, "run_id">[] = [],
): RunState {
  const all = [
    { scope: "", parent_attempt: null, key: "", position: 0, status: "running" as const },
    ...scopes,
  ];
  return {
    run,
    definition,
    attempts: new Map(attempts.map((a) => [a.id, a])),
    lastVisit: (path) => Math.max(0, ...attempts.filter((a) => a.path === path).map((a) => a.visit)),
    scopes: new Map(all.map((s) => [s.scope, { run_id: "r1", ...s }])),
  };
}

const stateNamed = (id: string) =>
  [...chain.states, ...asking.states, ...fan.states].find((s) => s.id === id)!;
const done = (output: unknown, state: State = stateNamed("a")): Prepared => ({
  outcome: { kind: "completed", output },
  state,
  context: { a: output },
});
const failed = (code: string, state: State = stateNamed("a")): Prepared => ({
  outcome: { kind: "failed", error: { code, message: code } },
  state,
});
const kinds = (cs: Command[]) => cs.map((c) => c.kind);
const events = (cs: Command[]) =>
  cs.filter((c): c is CommandOf<"append_event"> => c.kind === "append_event").map((c) => c.type);
const rejects = (fn: () => unknown) => assertThrows(fn, StationError) as StationError;
const only = <K extends Command["kind"]>(cs: Command[], kind: K) =>
  cs.filter((c): c is CommandOf<K> => c.kind === kind);

Deno.test("claim: every run status × attempt status", () => {
  for (const runStatus of RUN_STATUSES) {
    for (const status of ATTEMPT_STATUSES) {
      const a = attemptRow(1, { status, owner: status === "running" ? "other" : null });
      const d = claim({
        message: { id: 1, run: "r1", path: "a", attempt: 1 },
        attempt: a,
        run: runRow(runStatus),
        inflight: false,
        retryPending: false,
      }, env);
      const active = !TERMINAL_RUN.includes(runStatus) && runStatus !== "paused";
      const want = !active ? "drop" : status === "scheduled" ? "run" : status === "running" ? "busy" : "drop";
      assertEquals(d.kind, want, `${runStatus} × ${status}`);
      if (d.kind !== "run") continue;
      assertEquals(d.attempt.status, "running");
      assertEquals(only(d.commands, "claim_attempt")[0], {
        kind: "claim_attempt",
        attemptId: 1,
        owner: "me",
        leaseUntil: NOW + env.leaseMs,
        at: iso(NOW),
      });
      assertEquals(
        events(d.commands),
        [
          ...(runStatus === "pending" ? ["run_started"] : []),
          "step_started",
          ...(runStatus === "running" ? [] : ["run_status"]),
        ],
        `${runStatus} × ${status}`,
      );
    }
  }
});

Deno.test("claim fencing: stale messages, duplicates, live and lapsed leases, retry backoff", async (t) => {
  const input = (over: Partial<Parameters<typeof claim>[0]> = {}) => ({
    message: { id: 1, run: "r1", path: "a", attempt: 1 },
    attempt: attemptRow(1, { status: "scheduled", owner: null }),
    run: runRow("running"),
    inflight: false,
    retryPending: false,
    ...over,
  });
  await t.step("a message for an older attempt, another path or run, or no row is dropped", () => {
    for (
      const message of [
        { id: 1, run: "r1", path: "a", attempt: 2 },
        { id: 1, run: "r1", path: "b", attempt: 1 },
        { id: 1, run: "r2", path: "a", attempt: 1 },
      ]
    ) assertEquals(claim(input({ message }), env).kind, "drop", JSON.stringify(message));
    assertEquals(claim(input({ attempt: undefined, run: undefined }), env).kind, "drop");
  });
  await t.step("a duplicate of an attempt this process is running is dropped", () => {
    const running = attemptRow(1, { status: "running", owner: "me", lease_until: NOW + 5000 });
    assertEquals(claim(input({ attempt: running, inflight: true }), env).kind, "drop");
  });
  await t.step("another worker's live lease: come back when it would lapse", () => {
    const running = attemptRow(1, { status: "running", owner: "other", lease_until: NOW + 5000 });
    assertEquals(claim(input({ attempt: running }), env), { kind: "busy", retryMs: 5050 });
  });
  await t.step("a lapsed lease is reclaimed, with an event naming the previous owner", () => {
    const running = attemptRow(1, { status: "running", owner: "gone", lease_until: NOW - 1 });
    const d = claim(input({ attempt: running }), env);
    assert(d.kind === "run");
    assertEquals(only(d.commands, "append_event")[0].data, { attempt: 1, previous_owner: "gone" });
    assertEquals(events(d.commands), ["step_reclaimed", "step_started"]);
  });
  await t.step("an attempt waiting out its retry backoff is not run early", () => {
    assertEquals(claim(input({ retryPending: true }), env).kind, "drop");
  });
});

Deno.test("settle: every run status × attempt status, from running and from waiting", () => {
  for (const from of ["running", "waiting"] as const) {
    for (const runStatus of RUN_STATUSES) {
      for (const status of ATTEMPT_STATUSES) {
        const state = runState(chain, runRow(runStatus), [attemptRow(1, { status })]);
        const cs = settle(state, { attemptId: 1, from, prepared: done({ n: 1 }) }, env);
        const records = status === from && !TERMINAL_RUN.includes(runStatus);
        assertEquals(cs.length > 0, records, `${from}: ${runStatus} × ${status}`);
        if (!records) continue;
        assertEquals(kinds(cs).slice(0, 2), ["cancel_timers", "complete_attempt"]);
        // The next step is scheduled even in a paused run: its claim drops it, resume publishes it.
        assertEquals(only(cs, "dispatch").length, 1);
        const runStatusAfter = only(cs, "set_run_status").map((c) => c.status);
        // A waiting run runs again (a run waiting for concurrency has no attempts; were it to, it runs too); a
        // pending one (not started) and a paused one keep their status.
        const runs = runStatus === "waiting" || runStatus === "waiting_for_concurrency";
        assertEquals(runStatusAfter, runs ? ["running"] : [], `${from}: ${runStatus}`);
      }
    }
  }
});

Deno.test("settle fencing: a duplicate outcome, another owner's attempt and a finished run record nothing", () => {
  const state = runState(chain, runRow("running"), [attemptRow(1)]);
  const first = settle(state, { attemptId: 1, from: "running", prepared: done({ n: 1 }) }, env);
  assert(first.length > 0);
  // The state now holds the first outcome (as the ledger would after the commit).
  assertEquals(settle(state, { attemptId: 1, from: "running", prepared: done({ n: 2 }) }, env), []);
  const theirs = runState(chain, runRow("running"), [attemptRow(1, { owner: "other" })]);
  assertEquals(settle(theirs, { attemptId: 1, from: "running", prepared: done({}) }, env), []);
  const canceled = runState(chain, runRow("canceled"), [attemptRow(1)]);
  assertEquals(settle(canceled, { attemptId: 1, from: "running", prepared: done({}) }, env), []);
  const missing = runState(chain, runRow("running"), []);
  assertEquals(settle(missing, { attemptId: 1, from: "running", prepared: done({}) }, env), []);
});

Deno.test("createRun: the run, its top scope, the first step scheduled and dispatched", () => {
  const cs = createRun({
    id: "r9",
    definition: chain,
    workflowVersion: 2,
    input: { n: 1 },
    traceparent: "tp",
  }, env);
  assertEquals(kinds(cs), ["create_run", "append_event", "schedule_attempt", "append_event", "dispatch"]);
  const create = only(cs, "create_run")[0];
  assertEquals(create.context, {
    n: 1,
    workflow: { input: { n: 1 }, run_id: "r9", workflow_id: "chain" },
    steps: {},
  });
  const scheduled = only(cs, "schedule_attempt")[0];
  assertEquals([scheduled.path, scheduled.visit, scheduled.attempt, scheduled.dispatchedAt], [
    "a",
    1,
    1,
    NOW,
  ]);
  assertEquals(only(cs, "dispatch")[0], {
    kind: "dispatch",
    attemptId: scheduled.ref,
    runId: "r9",
    path: "a",
    attempt: 1,
  });
});

Deno.test("completed steps: next step, then the run's result checked against outputSchema", () => {
  const next = settle(runState(chain, runRow("running"), [attemptRow(1)]), {
    attemptId: 1,
    from: "running",
    prepared: done({ n: 1 }),
  }, env);
  assertEquals(events(next), ["step_completed", "step_scheduled"]);
  assertEquals(only(next, "schedule_attempt")[0].stepId, "b");

  const last = (output: unknown) =>
    settle(runState(chain, runRow("running"), [attemptRow(1, { step_id: "b" })]), {
      attemptId: 1,
      from: "running",
      prepared: done(output, stateNamed("b")),
    }, env);
  const ok = last({ ok: true });
  assertEquals(only(ok, "finish_run")[0].status, "completed");
  assertEquals(only(ok, "finish_run")[0].result, { ok: true });
  assertEquals(events(ok), ["step_completed", "run_completed"]);
  const bad = only(last({ nope: 1 }), "finish_run")[0];
  assertEquals([bad.status, bad.error?.code], ["failed", "output_invalid"]);

  // A loop back to a step: the next visit of its path (finished visits are counted, not loaded).
  const looped = settle(
    {
      ...runState(chain, runRow("running"), [attemptRow(1)]),
      lastVisit: (path) => (path === "b" ? 2 : 0),
    },
    { attemptId: 1, from: "running", prepared: done({ n: 1 }) },
    env,
  );
  assertEquals(only(looped, "schedule_attempt")[0].visit, 3);

  const routed = settle(runState(chain, runRow("running"), [attemptRow(1)]), {
    attemptId: 1,
    from: "running",
    prepared: { ...done(1), outcome: { kind: "completed", output: 1, next: "nowhere" } },
  }, env);
  assertEquals(only(routed, "fail_attempt")[0].error.code, "unknown_next_state");
});

Deno.test("failures: retried with backoff per policy, non_retryable and the last attempt fail the run", () => {
  const fail = (code: string, attempt: number) =>
    settle(runState(chain, runRow("running"), [attemptRow(1, { attempt })]), {
      attemptId: 1,
      from: "running",
      prepared: failed(code),
    }, env);
  const retried = fail("boom", 1);
  const retry = only(retried, "schedule_attempt")[0];
  assertEquals([retry.attempt, retry.visit], [2, 1]);
  assertEquals(only(retried, "add_timer")[0], {
    kind: "add_timer",
    runId: "r1",
    attemptId: retry.ref,
    timerKind: "retry",
    fireAt: NOW + 1000,
    at: iso(NOW),
  });
  assertEquals(only(retried, "dispatch"), [], "the retry timer publishes it");
  assertEquals(events(retried), ["step_failed", "step_scheduled", "step_retry_scheduled"]);
  for (const [code, attempt] of [["fatal", 1], ["canceled", 1], ["boom", 3]] as const) {
    const finish = only(fail(code, attempt), "finish_run")[0];
    assertEquals([finish.status, finish.error], ["failed", { code, message: code, step: "a" }], code);
  }
});

Deno.test("no worker: a scheduled step on an unserved queue fails with no_worker, retried per its policy", () => {
  const scheduled = (attempt: number) => attemptRow(1, { status: "scheduled", owner: null, attempt });
  const expire = (run: RunRow, a: AttemptRow) =>
    expireUnserved(runState(chain, run, [a]), { attemptId: 1, queue: "gpu", timeoutMs: 2000 }, env);
  const first = expire(runRow("running"), scheduled(1));
  assertEquals(only(first, "fail_attempt")[0].error, {
    code: "no_worker",
    message: "no worker served queue gpu within the step's timeout of 2000ms",
    step: "a",
  });
  assertEquals(
    events(first),
    ["step_failed", "step_scheduled", "step_retry_scheduled"],
    "retry policy applies",
  );
  assertEquals(only(expire(runRow("running"), scheduled(3)), "finish_run")[0].error?.code, "no_worker");
  // Claimed meanwhile, paused or over: nothing.
  assertEquals(expire(runRow("running"), attemptRow(1)), []);
  assertEquals(expire(runRow("paused"), scheduled(1)), []);
  for (const status of TERMINAL_RUN) assertEquals(expire(runRow(status), scheduled(1)), [], status);
});

Deno.test("remote claims: the claim names the worker; only its outcome settles the attempt", () => {
  const state = runState(chain, runRow("running"), [attemptRow(1, { status: "scheduled", owner: null })]);
  const message = { id: 1, run: "r1", path: "a", attempt: 1 };
  const worker = { ...env, owner: "worker-1" };
  const decision = claim({
    message,
    attempt: state.attempts.get(1),
    run: state.run,
    inflight: false,
    retryPending: false,
  }, worker);
  assert(decision.kind === "run");
  assertEquals(only(decision.commands, "claim_attempt")[0].owner, "worker-1");
  const claimed = runState(chain, runRow("running"), [attemptRow(1, { owner: "worker-1" })]);
  const input = { attemptId: 1, from: "running" as const, prepared: done(1) };
  assertEquals(
    settle(claimed, input, { ...env, owner: "worker-2" }),
    [],
    "another worker's outcome is fenced",
  );
  assertEquals(settle(claimed, input, env), [], "so is the station's own");
  assert(kinds(settle(claimed, input, worker)).includes("complete_attempt"));
});

Deno.test("waits: sleep and approval park the step with a durable timer; the run is waiting", () => {
  const sleep = settle(runState(chain, runRow("running"), [attemptRow(1)]), {
    attemptId: 1,
    from: "running",
    prepared: { outcome: { kind: "sleep", until: NOW + 60_000 }, state: stateNamed("a") },
  }, env);
  assertEquals(kinds(sleep), ["wait_attempt", "add_timer", "append_event", "set_run_status", "append_event"]);
  assertEquals(only(sleep, "add_timer")[0].fireAt, NOW + 60_000);
  assertEquals(only(sleep, "set_run_status")[0].status, "waiting");

  const ask = settle(runState(asking, runRow("running"), [attemptRow(7, { step_id: "ask" })]), {
    attemptId: 7,
    from: "running",
    prepared: {
      outcome: { kind: "approval", message: "ok?", approvers: ["ann"], timeoutMs: 3_600_000 },
      state: stateNamed("ask"),
    },
  }, env);
  const request = only(ask, "request_approval")[0];
  assertEquals([request.approvalId, request.timeoutAt], ["appr-r1-7", iso(NOW + 3_600_000)]);
  assertEquals(only(ask, "add_timer")[0].timerKind, "approval_timeout");
});

Deno.test("fanout: child scopes up to maxConcurrency, a failed child cancels its siblings, the parent joins", () => {
  const outcome: Outcome = {
    kind: "fanout",
    join: "parallel",
    maxConcurrency: 1,
    blocks: (stateNamed("p") as Extract<State, { type: "parallel" }>).branches.map((b) => ({
      key: b.name,
      block: b,
      vars: { v: b.name },
    })),
  };
  const parent = attemptRow(1, { step_id: "p", step_type: "parallel" });
  const out = settle(runState(fan, runRow("running"), [parent]), {
    attemptId: 1,
    from: "running",
    prepared: { outcome, state: stateNamed("p") },
    scopeContext: { base: true },
  }, env);
  assertEquals(only(out, "wait_attempt")[0].fanout, { join: "parallel", maxConcurrency: 1 });
  assertEquals(only(out, "insert_scope").map((c) => [c.scope, c.position, c.context]), [
    ["p/x", 0, { base: true, v: "x" }],
    ["p/y", 1, { base: true, v: "y" }],
  ]);
  assertEquals(only(out, "add_timer")[0], {
    kind: "add_timer",
    runId: "r1",
    attemptId: 1,
    timerKind: "step_timeout",
    fireAt: NOW + env.defaultTimeoutMs,
    at: iso(NOW),
  });
  assertEquals(only(out, "start_scope").map((c) => c.scope), ["p/x"]);
  assertEquals(only(out, "dispatch").map((c) => c.path), ["p/x/x1"]);

  // Branch x fails while y still runs: y is canceled and the parent is scheduled to join.
  const waiting = attemptRow(1, {
    step_id: "p",
    status: "waiting",
    owner: null,
    output: JSON.stringify({ join: "parallel", maxConcurrency: 2 }),
  });
  const x = attemptRow(2, { scope: "p/x", step_id: "x1" });
  const y = attemptRow(3, { scope: "p/y", step_id: "y1", owner: "other" });
  const scopes = [
    { scope: "p/x", parent_attempt: 1, key: "x", position: 0, status: "running" as const },
    { scope: "p/y", parent_attempt: 1, key: "y", position: 1, status: "running" as const },
  ];
  const joined = settle(runState(fan, runRow("running"), [waiting, x, y], scopes), {
    attemptId: 2,
    from: "running",
    prepared: failed("boom", (fan.states[0] as Extract<State, { type: "parallel" }>).branches[0].states[0]),
  }, env);
  assertEquals(
    kinds(joined).filter((k) => k.includes("scope") || k.endsWith("attempt") || k === "dispatch"),
    ["fail_attempt", "end_scope", "cancel_scope", "cancel_attempt", "requeue_attempt", "dispatch"],
  );
  assertEquals(only(joined, "cancel_attempt")[0].attemptId, 3);
  assertEquals(only(joined, "dispatch")[0].attemptId, 1);
});

Deno.test("cancel, pause and resume", async (t) => {
  await t.step("cancel ends the run and cancels every active attempt, in the ledger's order", () => {
    const state = runState(chain, runRow("running"), [
      attemptRow(1, { status: "waiting" }),
      attemptRow(2, { status: "scheduled", step_id: "b" }),
      attemptRow(3, { status: "completed", step_id: "c" }),
      attemptRow(4, { status: "running", step_id: "d" }),
    ]);
    const cs = cancelRun(state, "stop", env);
    assertEquals(only(cs, "cancel_attempt").map((c) => c.attemptId), [4, 2, 1]);
    assertEquals(kinds(cs).slice(-3), ["cancel_open_scopes", "finish_run", "append_event"]);
    assertEquals(only(cs, "finish_run")[0].error, { code: "canceled", message: "stop" });
    for (const status of TERMINAL_RUN) {
      const err = rejects(() => cancelRun(runState(chain, runRow(status), []), "x", env));
      assertEquals([err.code, err.status], ["run_finished", 409]);
    }
  });
  await t.step("pause: once; a finished run cannot be paused", () => {
    assertEquals(pauseRun(runRow("paused"), env), []);
    assertEquals(kinds(pauseRun(runRow("waiting"), env)), ["set_run_status", "append_event"]);
    assertEquals(rejects(() => pauseRun(runRow("failed"), env)).code, "run_finished");
  });
  await t.step("resume dispatches scheduled attempts except those waiting out a retry backoff", () => {
    const state = runState(chain, runRow("paused"), [
      attemptRow(1, { status: "scheduled" }),
      attemptRow(2, { status: "scheduled", step_id: "b", attempt: 2 }),
    ]);
    const cs = resumeRun(state, new Set([2]), env);
    assertEquals(only(cs, "dispatch").map((c) => c.attemptId), [1]);
    assertEquals(events(cs), ["run_resumed"]);
    const err = rejects(() => resumeRun(runState(chain, runRow("running"), []), new Set(), env));
    assertEquals([err.code, err.status], ["run_not_paused", 409]);
  });
});

Deno.test("timers fire once: retry, wait, approval timeout, step timeout", async (t) => {
  const timer = (over: Partial<TimerRow>): TimerRow => ({
    id: 5,
    run_id: "r1",
    attempt_id: 1,
    kind: "retry",
    fire_at: NOW - 1,
    status: "pending",
    ...over,
  });
  await t.step("a timer another process fired is left alone", () => {
    const state = runState(chain, runRow("running"), [attemptRow(1, { status: "scheduled" })]);
    assertEquals(fireTimer(state, { timer: timer({ status: "fired" }), approvalPending: false }, env), []);
  });
  await t.step("retry: dispatched unless the run is paused or over", () => {
    for (const status of RUN_STATUSES) {
      const state = runState(chain, runRow(status), [attemptRow(1, { status: "scheduled" })]);
      const cs = fireTimer(state, { timer: timer({}), approvalPending: false }, env);
      const active = status !== "paused" && !TERMINAL_RUN.includes(status);
      assertEquals(kinds(cs), active ? ["fire_timer", "dispatch"] : ["fire_timer"], status);
    }
  });
  await t.step("timer: the step completes with when it fired", () => {
    const a = attemptRow(1, { status: "waiting", owner: null });
    const outcome = timerOutcome(timer({ kind: "timer" }), stateNamed("a"), NOW)!;
    assertEquals(outcome, { kind: "completed", output: { fired_at: iso(NOW), scheduled_for: iso(NOW - 1) } });
    const cs = fireTimer(runState(chain, runRow("waiting"), [a]), {
      timer: timer({ kind: "timer" }),
      approvalPending: false,
      prepared: { outcome, state: stateNamed("a"), context: {} },
    }, env);
    assertEquals(events(cs), ["timer_fired", "step_completed", "step_scheduled", "run_status"]);
  });
  await t.step("approval timeout: only while the approval is pending", () => {
    const a = attemptRow(1, { step_id: "ask", status: "waiting", owner: null });
    const t5 = timer({ kind: "approval_timeout" });
    const outcome = timerOutcome(t5, stateNamed("ask"), NOW)!;
    assertEquals(outcome.kind, "failed");
    const prepared = { outcome, state: stateNamed("ask") };
    const late = fireTimer(runState(asking, runRow("waiting"), [a]), {
      timer: t5,
      approvalPending: false,
      prepared,
    }, env);
    assertEquals(kinds(late), ["fire_timer"]);
    const cs = fireTimer(runState(asking, runRow("waiting"), [{ ...a }]), {
      timer: t5,
      approvalPending: true,
      prepared,
    }, env);
    assertEquals(only(cs, "finish_run")[0].error?.code, "approval_timed_out");
    assertEquals(timerOutcome(t5, stateNamed("a"), NOW), undefined, "not an approval step");
  });
  await t.step("step timeout: a waiting fanout's open children are canceled and it fails", () => {
    const parent = attemptRow(1, { step_id: "p", status: "waiting", owner: null, output: "{}" });
    const child = attemptRow(2, { scope: "p/x", step_id: "x1", owner: "other" });
    const scopes = [{ scope: "p/x", parent_attempt: 1, key: "x", position: 0, status: "running" as const }];
    const cs = fireTimer(runState(fan, runRow("waiting"), [parent, child], scopes), {
      timer: timer({ kind: "step_timeout" }),
      approvalPending: false,
    }, env);
    assertEquals(only(cs, "cancel_attempt").map((c) => c.attemptId), [2]);
    assertEquals(only(cs, "fail_attempt")[0].error.code, "step_timeout");
    assertEquals(only(cs, "finish_run")[0].status, "failed");
    const over = fireTimer(runState(fan, runRow("running"), [{ ...parent, status: "completed" }]), {
      timer: timer({ kind: "step_timeout" }),
      approvalPending: false,
    }, env);
    assertEquals(kinds(over), ["fire_timer"], "the step finished first");
  });
});

Deno.test("approval decisions: the decision is the step's output; a second one is a 409", () => {
  const approval: ApprovalRow = {
    id: "appr-r1-1",
    run_id: "r1",
    attempt_id: 1,
    step_id: "ask",
    message: "ok?",
    approvers: "[]",
    status: "pending",
    decided_by: null,
    comment: null,
    decided_at: null,
    timeout_at: iso(NOW + 1000),
    created_at: iso(NOW),
  };
  const a = () => attemptRow(1, { step_id: "ask", status: "waiting", owner: null });
  const rejected = decisionOutcome(stateNamed("ask"), { approved: false, actor: "ann" }, NOW);
  assertEquals(rejected.outcome, { kind: "completed", output: rejected.decision, next: "no" });
  const cs = decideApproval(runState(asking, runRow("waiting"), [a()]), {
    approval,
    decision: rejected.decision,
    prepared: { outcome: rejected.outcome, state: stateNamed("ask"), context: {} },
  }, env);
  assertEquals(kinds(cs).slice(0, 3), ["decide_approval", "cancel_timers", "append_event"]);
  assertEquals(only(cs, "schedule_attempt")[0].stepId, "no");
  const err = rejects(
    () =>
      decideApproval(runState(asking, runRow("waiting"), [a()]), {
        approval: { ...approval, status: "timed_out" },
        decision: rejected.decision,
        prepared: { outcome: rejected.outcome, state: stateNamed("ask") },
      }, env),
  );
  assertEquals([err.code, err.status], ["approval_decided", 409]);
});

Deno.test("backoff: exponential, capped, with ±20% jitter", () => {
  const policy = {
    max_attempts: 5,
    initial_interval: "1s",
    backoff_coefficient: 2,
    max_interval: "3s",
    non_retryable: [],
  };
  assertEquals([1, 2, 3].map((n) => backoff(policy, n, () => 0.5)), [1000, 2000, 3000]);
  assertEquals([backoff(policy, 1, () => 0), backoff(policy, 1, () => 0.999999)], [800, 1200]);
});

Deno.test("createRun with concurrency keys: admitted at once, or waiting with its key and position", () => {
  const keyed = { ...chain, concurrency: [{ key: "${input.n}", limit: 1 }] } as typeof chain;
  const start = (held: number, waiting: number) =>
    createRun({
      id: "r1",
      definition: keyed,
      workflowVersion: 1,
      input: { n: 1 },
      traceparent: "tp",
      concurrency: { slots: [{ key: "chain/1", limit: 1 }], priority: 5, usage: () => ({ held, waiting }) },
    }, env);
  const free = start(0, 0);
  assertEquals(only(free, "enqueue_concurrency")[0].held, true);
  assertEquals(only(free, "dispatch").length, 1);
  for (const [held, waiting] of [[1, 0], [0, 2]]) {
    const cs = start(held, waiting);
    assertEquals(only(cs, "enqueue_concurrency")[0].held, false);
    assertEquals(only(cs, "dispatch").length, 0);
    assertEquals(only(cs, "set_run_status")[0].status, "waiting_for_concurrency");
    assertEquals(only(cs, "append_event")[1].data, {
      key: "chain/1",
      reason: "concurrency",
      position: waiting + 1,
      priority: 5,
    });
  }
  // A rate-limit key waits the same way, saying why.
  const rated = createRun({
    id: "r2",
    definition: keyed,
    workflowVersion: 1,
    input: { n: 1 },
    traceparent: "tp",
    concurrency: {
      slots: [{ key: "rate:chain", limit: 2, periodMs: 60_000 }],
      priority: 5,
      usage: () => ({ held: 2, waiting: 0 }),
    },
  }, env);
  assertEquals(only(rated, "append_event")[1].data, {
    key: "rate:chain",
    reason: "rate_limit",
    position: 1,
    priority: 5,
  });
});
