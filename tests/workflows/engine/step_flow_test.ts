import { DatabaseSync } from "node:sqlite";
import { nextStartAt } from "../../../src/workflows/engine/rate_window.ts";
import { validateDefinition } from "../../../src/workflows/definition/validate.ts";
import type { Engine } from "../../../src/workflows/engine/mod.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "../helpers.ts";

/** The status of a run's step (its latest attempt). */
function stepStatus(engine: Engine, runId: string, path: string): string | undefined {
  return attempts(engine, runId).filter((a) => a.path === path).at(-1)?.status;
}

async function waitStep(engine: Engine, runId: string, path: string, status: string): Promise<void> {
  const ok = await waitFor(() => stepStatus(engine, runId, path) === status, 15_000);
  assert(
    ok,
    `${runId} ${path} is ${stepStatus(engine, runId, path)}, wanted ${status}: ${eventTypes(engine, runId)}`,
  );
}

/** [started, completed] of every attempt of a step, in ms, from the ledger's rows. */
function spans(
  dbPath: string,
  path: string,
): { run: string; customer: string; start: number; end: number }[] {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return (db.prepare(
      `SELECT a.run_id AS run, json_extract(r.input, '$.customer') AS customer, a.started_at, a.completed_at
       FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE a.path = ? AND a.started_at IS NOT NULL ORDER BY a.started_at`,
    ).all(path) as { run: string; customer: string; started_at: string; completed_at: string }[]).map((
      r,
    ) => ({
      run: r.run,
      customer: r.customer,
      start: Date.parse(r.started_at),
      end: Date.parse(r.completed_at),
    }));
  } finally {
    db.close();
  }
}

Deno.test("rate window as a table: a sliding window, waiters ahead go first", () => {
  const spec = { limit: 2, periodMs: 1000 };
  const rows: [string, number[], number, number][] = [
    ["room: now", [], 5000, 5000],
    ["one start in the window: now", [4500], 5000, 5000],
    ["full: when the older start leaves", [4200, 4700], 5000, 5200],
    ["old starts do not count", [1000, 2000, 4800], 5000, 5000],
    ["a waiter promised later goes first", [4900, 5600], 5000, 5900],
    ["three ahead, limit 2", [4500, 4600, 5500], 5000, 5600],
  ];
  for (const [name, times, now, want] of rows) assertEquals(nextStartAt(times, spec, now), want, name);
});

Deno.test("step limits validate: priority 0-9, rate_limit needs a period of 1ms to 24h", () => {
  const step = (extra: Record<string, unknown>) => ({
    id: "v",
    states: [{ id: "s", type: "transform", expression: "1", ...extra }],
  });
  assert(validateDefinition(step({ priority: 9, concurrency: [{ key: "${input.c}", limit: 1 }] })).valid);
  assert(validateDefinition(step({ rate_limit: { key: "api", limit: 60, period: "1m" } })).valid);
  for (
    const bad of [
      { priority: 10 },
      { concurrency: [] },
      { concurrency: [{ limit: 0 }] },
      { rate_limit: { limit: 5, period: "0s" } },
      { rate_limit: { limit: 5, period: "2d" } },
      { rate_limit: { limit: 5 } },
    ]
  ) {
    assert(!validateDefinition(step(bad)).valid, JSON.stringify(bad));
  }
});

Deno.test("step concurrency keys: shared across workflows, waiting steps visible, priority, cancel, release", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const gated = (id: string, extra: Record<string, unknown> = {}) =>
    def({
      id,
      states: [
        { id: "prep", type: "transform", expression: "{'who': $input.customer}", next: "ask" },
        {
          id: "ask",
          type: "human_approval",
          message: "go?",
          approvers: ["ops"],
          // A key over an earlier step's output: the same key in another workflow is the same key.
          concurrency: [{ key: "${prep.who}", limit: 1 }],
          ...extra,
          next: "done",
        },
        { id: "done", type: "transform", expression: "{'ok': true}" },
      ],
    });
  const a = gated("wf-a"), b = gated("wf-b", { priority: 9 });
  const approve = async (runId: string) => {
    await waitRun(engine, runId, ["waiting"]);
    const [approval] = engine.reads.approvals.list({ runId });
    await engine.decide(approval.id, true, "ops");
  };
  try {
    const holder = await engine.startRun({ definition: a, input: { customer: "acme" } });
    await waitRun(engine, holder.id, ["waiting"]);
    const older = await engine.startRun({ definition: a, input: { customer: "acme" } });
    await waitStep(engine, older.id, "ask", "waiting_for_concurrency");
    const urgent = await engine.startRun({ definition: b, input: { customer: "acme" } });
    await waitStep(engine, urgent.id, "ask", "waiting_for_concurrency");
    const dropped = await engine.startRun({ definition: a, input: { customer: "acme" } });
    await waitStep(engine, dropped.id, "ask", "waiting_for_concurrency");
    const other = await engine.startRun({ definition: a, input: { customer: "globex" } });
    await waitRun(engine, other.id, ["waiting"]); // another key is not held up

    // The run goes on running while its step waits; the step says which key and where in line.
    assertEquals(engine.reads.runs.get(older.id)!.status, "running");
    const listed = station.ctx.runs.steps(urgent.id, { waitingFor: true }).find((s) => s.path === "ask")!;
    assertEquals(listed.waiting_for_concurrency, { key: "step:acme", position: 2 });
    assertEquals(listed.waiting_for, "concurrency key step:acme (position 2)");
    // /metrics counts waiting steps per workflow (keys are not labels: their values are unbounded).
    const metrics = await (await fetch(`${station.url}/metrics`)).text();
    assert(metrics.includes(`stn_steps_waiting_for_concurrency{workflow="${a.id}"} 2`), metrics);
    assert(metrics.includes(`stn_steps_waiting_for_concurrency{workflow="${b.id}"} 1`), metrics);
    assert(eventTypes(engine, older.id).includes("step_waiting_for_concurrency"));
    assertEquals(engine.reads.concurrency.usage("step:acme", engine.clock.now()), { held: 1, waiting: 3 });

    engine.cancel(dropped.id); // a canceled run's waiting step gives up its place
    assertEquals(engine.reads.concurrency.usage("step:acme", engine.clock.now()), { held: 1, waiting: 2 });

    await approve(holder.id);
    await waitRun(engine, urgent.id, ["waiting"]); // priority 9 goes before the older waiter
    assertEquals(stepStatus(engine, older.id, "ask"), "waiting_for_concurrency");
    await approve(urgent.id);
    await approve(older.id);
    for (const r of [holder, urgent, older]) assertEquals((await waitRun(engine, r.id)).status, "completed");
    assert(eventTypes(engine, older.id).includes("step_admitted"));
    await approve(other.id);
    await waitRun(engine, other.id);
    assertEquals(engine.reads.concurrency.usage("step:acme", engine.clock.now()), { held: 0, waiting: 0 });
  } finally {
    await close();
  }
});

Deno.test("step concurrency limit 1 over concurrent runs: never two at once per key, all complete", async () => {
  const { station, home, close } = await startTestStation();
  const engine = station.ctx.engine;
  try {
    const definition = def({
      id: "per-customer-call",
      states: [
        {
          id: "call",
          type: "timer",
          duration: "20ms",
          concurrency: [{ key: "${input.customer}", limit: 1 }, { limit: 3 }],
          next: "after",
        },
        { id: "after", type: "transform", expression: "{'ok': true}" },
      ],
    });
    const runs = await Promise.all(
      Array.from({ length: 24 }, (_, i) => engine.startRun({ definition, input: { customer: `c${i % 3}` } })),
    );
    for (const r of runs) assertEquals((await waitRun(engine, r.id, undefined, 60_000)).status, "completed");
    assert(
      runs.some((r) => eventTypes(engine, r.id).includes("step_waiting_for_concurrency")),
      "steps waited",
    );
    const calls = spans(home.path("stn.db"), "call");
    assertEquals(calls.length, 24);
    for (const c of ["c0", "c1", "c2"]) {
      const mine = calls.filter((s) => s.customer === c);
      for (let i = 1; i < mine.length; i++) {
        assert(
          mine[i - 1].end <= mine[i].start,
          `${c}: ${mine[i].run} started before ${mine[i - 1].run} ended`,
        );
      }
    }
    assertEquals(engine.reads.concurrency.usage("step:per-customer-call/call", engine.clock.now()), {
      held: 0,
      waiting: 0,
    });
  } finally {
    await close();
  }
});

Deno.test("step rate_limit: at most N starts in any window, waits survive a station restart", async () => {
  const home = await tempHome();
  const definition = def({
    id: "limited",
    states: [{
      id: "send",
      type: "transform",
      expression: "{'n': n}",
      rate_limit: { limit: 2, period: "1s" },
    }],
  });
  let first = await startTestStation({ home });
  try {
    const runs = await Promise.all(
      Array.from({ length: 7 }, (_, n) => first.station.ctx.engine.startRun({ definition, input: { n } })),
    );
    const engine = first.station.ctx.engine;
    assert(
      await waitFor(() => runs.some((r) => eventTypes(engine, r.id).includes("step_rate_limited")), 15_000),
      "some step waits for the window",
    );
    const waiting = runs.find((r) => stepStatus(engine, r.id, "send") === "scheduled")!;
    const listed = first.station.ctx.runs.steps(waiting.id, { waitingFor: true })[0];
    assert(listed.waiting_for?.startsWith("rate limit step:limited/send until "), listed.waiting_for);
    await first.close();
    first = await startTestStation({ home });
    for (const r of runs) {
      assertEquals((await waitRun(first.station.ctx.engine, r.id, undefined, 30_000)).status, "completed");
    }
    const starts = spans(home.path("stn.db"), "send").map((s) => s.start).sort((x, y) => x - y);
    assertEquals(starts.length, 7);
    // A sliding window: any 1s holds at most 2 starts, so the 3rd start after any start is 1s or more later.
    for (let i = 0; i + 2 < starts.length; i++) {
      assert(starts[i + 2] - starts[i] >= 1000, `starts ${i}..${i + 2} within 1s: ${starts}`);
    }
  } finally {
    await first.close();
    await home.cleanup();
  }
});

Deno.test("step keys that need JSONata: evaluated before the claim; a failing one fails the step", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const gated = (key: string) =>
    def({
      id: "jsonata-keys",
      states: [{
        id: "ask",
        type: "human_approval",
        message: "go?",
        approvers: ["ops"],
        concurrency: [{ key, limit: 1 }],
      }],
    });
  try {
    const lower = gated("${$lowercase(input.customer)}");
    const first = await engine.startRun({ definition: lower, input: { customer: "ACME" } });
    await waitRun(engine, first.id, ["waiting"]);
    const second = await engine.startRun({ definition: lower, input: { customer: "acme" } });
    await waitStep(engine, second.id, "ask", "waiting_for_concurrency");
    assertEquals(engine.reads.concurrency.usage("step:acme", engine.clock.now()), { held: 1, waiting: 1 });
    engine.cancel(first.id);
    await waitRun(engine, second.id, ["waiting"]); // admitted when the holder's run was canceled

    const broken = await engine.startRun({ definition: gated("${$error('no key')}"), input: {} });
    const run = await waitRun(engine, broken.id);
    assertEquals(run.status, "failed");
    assertEquals(JSON.parse(run.error!).code, "expression_failed");
    engine.cancel(second.id);
  } finally {
    await close();
  }
});
