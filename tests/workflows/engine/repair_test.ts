/**
 * Retry and fork as pure transitions (repair.ts): run state in, commands out, as tables. No SQLite, no NATS;
 * the clock is a number.
 */
import { StationError } from "../../../src/errors.ts";
import { iso } from "../../../src/lib/clock.ts";
import type { Command, CommandOf } from "../../../src/workflows/engine/commands.ts";
import {
  type AttemptRow,
  type AttemptStatus,
  RUN_STATUSES,
  type RunRow,
  type RunStatus,
} from "../../../src/workflows/engine/ledger.ts";
import { forkRun, incompatibility, RETRYABLE, retryRun } from "../../../src/workflows/engine/repair.ts";
import { evolve, type RunState, type TransitionEnv } from "../../../src/workflows/engine/run_state.ts";
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

const pipeline = def({
  id: "pipe",
  states: [
    { id: "plan", type: "transform", expression: "1", next: "build" },
    { id: "build", type: "transform", expression: "2", next: "sum" },
    { id: "sum", type: "transform", expression: '$sum(items.price) + "x"' },
  ],
});
const fixed = def({
  id: "pipe",
  states: [
    { id: "plan", type: "transform", expression: "1", next: "build" },
    { id: "build", type: "transform", expression: "2", next: "sum" },
    { id: "sum", type: "transform", expression: "$sum(items.price)" },
  ],
});

function runRow(status: RunStatus): RunRow {
  return {
    id: "r1",
    workflow_id: "pipe",
    workflow_version: 1,
    definition: "",
    status,
    input: "{}",
    result: null,
    error: status === "failed"
      ? JSON.stringify({ code: "expression_invalid", message: "bad", step: "sum" })
      : null,
    traceparent: null,
    created_at: iso(NOW - 1000),
    updated_at: iso(NOW - 1000),
    started_at: iso(NOW - 1000),
    completed_at: ["completed", "failed", "canceled"].includes(status) ? iso(NOW - 100) : null,
  };
}

function attempt(
  id: number,
  stepId: string,
  status: AttemptStatus,
  over: Partial<AttemptRow> = {},
): AttemptRow {
  return {
    id,
    run_id: "r1",
    scope: "",
    path: stepId,
    step_id: stepId,
    step_type: "transform",
    visit: 1,
    attempt: 1,
    status,
    output: status === "completed" ? JSON.stringify({ from: stepId }) : null,
    error: null,
    owner: null,
    lease_until: null,
    dispatched_at: NOW - 900,
    created_at: iso(NOW - 900),
    started_at: iso(NOW - 900),
    completed_at: iso(NOW - 800),
    ...over,
  };
}

function state(status: RunStatus, attempts: AttemptRow[]): RunState {
  return {
    run: runRow(status),
    definition: pipeline,
    attempts: new Map(attempts.map((a) => [a.id, a])),
    scopes: new Map([["", {
      run_id: "r1",
      scope: "",
      parent_attempt: null,
      key: "",
      position: 0,
      status: "canceled",
    }]]),
    lastVisit: (path) => Math.max(0, ...attempts.filter((a) => a.path === path).map((a) => a.visit)),
  };
}

const kinds = (cs: Command[]) => cs.map((c) => c.kind);
const events = (cs: Command[]) =>
  cs.filter((c): c is CommandOf<"append_event"> => c.kind === "append_event").map((c) => c.type);
const only = <K extends Command["kind"]>(cs: Command[], kind: K) =>
  cs.filter((c): c is CommandOf<K> => c.kind === kind);
const rejects = (fn: () => unknown) => assertThrows(fn, StationError) as StationError;

const ran = [attempt(1, "plan", "completed"), attempt(2, "build", "completed")];

Deno.test("retryRun: every run status × the status of the step it stopped at", () => {
  const stopped: AttemptStatus[] = ["failed", "canceled", "completed"];
  for (const status of RUN_STATUSES) {
    for (const last of stopped) {
      const topLevel = [...ran, attempt(3, "sum", last)];
      const s = state(status, topLevel);
      const label = `${status} × ${last}`;
      if (!RETRYABLE.includes(status) || last === "completed") {
        assertEquals(
          rejects(() => retryRun(s, { definition: fixed, workflowVersion: 2, topLevel }, env)).code,
          "run_not_retryable",
          label,
        );
        continue;
      }
      const cs = retryRun(s, { definition: fixed, workflowVersion: 2, topLevel }, env);
      assertEquals(
        kinds(cs),
        ["reopen_run", "append_event", "schedule_attempt", "append_event", "dispatch"],
        label,
      );
      assertEquals(events(cs), ["run_retried", "step_scheduled"], label);
      const [reopen] = only(cs, "reopen_run");
      assertEquals(reopen.definition, fixed);
      assertEquals(reopen.workflowVersion, 2);
      const [scheduled] = only(cs, "schedule_attempt");
      // A new visit of the step it stopped at; completed steps are not scheduled again.
      assertEquals([scheduled.path, scheduled.visit, scheduled.attempt], ["sum", 2, 1], label);
      const retried = only(cs, "append_event")[0].data as Record<string, unknown>;
      assertEquals(retried.from_step, "sum");
      assertEquals(retried.previous_status, status);
      assertEquals(retried.reused, 2);
    }
  }
});

Deno.test("retryRun: a run with no attempt has nothing to retry", () => {
  const s = state("failed", []);
  assertEquals(
    rejects(() => retryRun(s, { definition: fixed, workflowVersion: 1, topLevel: [] }, env)).code,
    "run_not_retryable",
  );
});

Deno.test("incompatibility: what a definition must keep to take over completed steps", () => {
  const other = (states: unknown[]) => def({ id: "pipe", states });
  const rows: [string, ReturnType<typeof def>, string, RegExp | null][] = [
    ["same ids and types", fixed, "sum", null],
    [
      "a completed step dropped",
      other([{ id: "build", type: "transform", expression: "2" }, {
        id: "sum",
        type: "transform",
        expression: "1",
      }]),
      "sum",
      /step plan completed/,
    ],
    [
      "a completed step's type changed",
      other([{ id: "plan", type: "timer", duration: "1s", next: "build" }, {
        id: "build",
        type: "transform",
        expression: "2",
      }, { id: "sum", type: "transform", expression: "1" }]),
      "sum",
      /plan completed as a transform step, the definition makes it a timer step/,
    ],
    [
      "the step to resume at dropped",
      other([{ id: "plan", type: "transform", expression: "1", next: "build" }, {
        id: "build",
        type: "transform",
        expression: "2",
      }]),
      "sum",
      /no top-level step sum/,
    ],
  ];
  for (const [label, d, resume, want] of rows) {
    const got = incompatibility(d, ran, resume);
    if (want === null) assertEquals(got, null, label);
    else assert(got !== null && want.test(got), `${label}: ${got}`);
  }
  const topLevel = [...ran, attempt(3, "sum", "failed")];
  const e = rejects(() =>
    retryRun(state("failed", topLevel), { definition: rows[1][1], workflowVersion: 3, topLevel }, env)
  );
  assertEquals(e.code, "definition_incompatible");
});

Deno.test("evolve: reopen_run makes a terminal run running again with its new definition", () => {
  for (const status of RETRYABLE) {
    const s = state(status, []);
    evolve(s, { kind: "reopen_run", runId: "r1", definition: fixed, workflowVersion: 2, at: iso(NOW) });
    assertEquals([s.run.status, s.run.error, s.run.completed_at, s.run.workflow_version], [
      "running",
      null,
      null,
      2,
    ]);
    assertEquals(s.definition, fixed);
    assertEquals(s.scopes.get("")!.status, "running");
  }
});

Deno.test("forkRun: reused steps are inserted completed with the parent's output, then the fork point is scheduled", () => {
  const req = {
    id: "f1",
    definition: fixed,
    workflowVersion: 1,
    input: { n: 1 },
    traceparent: "00-" + "1".repeat(32) + "-" + "2".repeat(16) + "-01",
    parentRunId: "r1",
    step: "build",
    reused: [ran[0]],
    context: {
      n: 1,
      plan: { from: "plan" },
      steps: { plan: { output: { from: "plan" }, status: "completed" } },
    },
  };
  const cs = forkRun(req, env);
  assertEquals(
    kinds(cs),
    [
      "create_run",
      "append_event",
      "append_event",
      "reuse_attempt",
      "append_event",
      "schedule_attempt",
      "append_event",
      "dispatch",
    ],
  );
  assertEquals(events(cs), ["run_created", "run_forked", "step_completed", "step_scheduled"]);
  const [created] = only(cs, "create_run");
  assertEquals(created.parent, { runId: "r1", step: "build" });
  assertEquals(created.context, req.context);
  const [reuse] = only(cs, "reuse_attempt");
  assertEquals([reuse.path, reuse.output, reuse.reusedFrom], ["plan", { from: "plan" }, 1]);
  const completed = only(cs, "append_event").find((e) => e.type === "step_completed")!;
  assertEquals((completed.data as { reused: boolean }).reused, true);
  assertEquals(only(cs, "schedule_attempt")[0].path, "build");
  // The reuse refers to the parent's attempt; the schedule uses a fresh temporary id.
  assert(only(cs, "schedule_attempt")[0].ref !== reuse.ref);

  const dropped = def({ id: "pipe", states: [{ id: "build", type: "transform", expression: "2" }] });
  assertEquals(rejects(() => forkRun({ ...req, definition: dropped }, env)).code, "definition_incompatible");
});
