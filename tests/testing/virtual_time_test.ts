import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { RunRow } from "../../src/workflows/engine/ledger.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "../workflows/engine_helpers.ts";

const HOUR = 3_600_000;

/** A day's wait, then an approval that times out after three days unless decided. */
const waitThenAsk = def({
  id: "wait-then-ask",
  states: [
    { id: "wait", type: "timer", duration: "24h", next: "ask" },
    {
      id: "ask",
      type: "human_approval",
      message: "ship it?",
      timeout: "72h",
      onTimeout: "late",
      next: "yes",
    },
    { id: "yes", type: "inject", data: { approved: true } },
    { id: "late", type: "inject", data: { late: true } },
  ],
});

const span = (run: RunRow) => Date.parse(run.completed_at!) - Date.parse(run.created_at);

Deno.test("virtual time: a 24 h timer and a 72 h approval timeout take the onTimeout branch at once", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  try {
    const time = station.time!;
    const run = await engine.startRun({ definition: waitThenAsk, input: {} });
    const done = await time.during(waitRun(engine, run.id));
    assertEquals(done.status, "completed");
    assertEquals(JSON.parse(done.result!), { late: true });
    const events = eventTypes(engine, run.id);
    assert(events.includes("timer_fired") && events.includes("approval_timed_out"), events.join(" "));
    // Stamped on the virtual clock: 96 h between start and end (plus the real milliseconds the steps took).
    assert(
      span(done) >= 96 * HOUR && span(done) < 96 * HOUR + 60_000,
      `run took ${span(done)} ms of virtual time`,
    );
    const [approval] = engine.reads.approvals.list({ runId: run.id });
    assertEquals(approval.status, "timed_out");
    assertEquals(Date.parse(approval.timeout_at) - Date.parse(approval.created_at), 72 * HOUR);
    assert(time.clock.skipped > 95 * HOUR, `the clock skipped ${time.clock.skipped} ms`);
    assertEquals(station.quiescence.busy(), null);
  } finally {
    await close();
  }
});

Deno.test("virtual time: a waiter delivers an approval before the clock would time it out", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  try {
    const run = await engine.startRun({ definition: waitThenAsk, input: {} });
    let decided = 0;
    const done = await station.time!.during(waitRun(engine, run.id), {
      beforeSkip: async () => {
        const [pending] = engine.reads.approvals.list({ runId: run.id, status: "pending" });
        if (!pending) return false;
        await engine.decide(pending.id, true, "test");
        decided++;
        return true;
      },
    });
    assertEquals(decided, 1);
    assertEquals(JSON.parse(done.result!), { approved: true });
    assert(span(done) >= 24 * HOUR && span(done) < 25 * HOUR, `run took ${span(done)} ms of virtual time`);
  } finally {
    await close();
  }
});

Deno.test("real time (the default): the same workflow is still waiting after a while", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  try {
    assertEquals(station.time, undefined);
    const run = await engine.startRun({ definition: waitThenAsk, input: {} });
    await waitRun(engine, run.id, ["waiting"]);
    assert(!await waitFor(() => engine.reads.runs.get(run.id)!.status !== "waiting", 1500), "still waiting");
    const [timer] = engine.reads.timers.list({ runId: run.id, kind: "timer" });
    assertEquals(timer.status, "pending");
    assert(timer.fire_at - Date.now() > 23 * HOUR, "due a day from now on the wall clock");
  } finally {
    await close();
  }
});

Deno.test("virtual time: retry backoff of a failing step is skipped", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  try {
    const run = await engine.startRun({
      definition: def({
        id: "always-fails",
        states: [{
          id: "flaky",
          type: "transform",
          expression: "$error('still broken')",
          retry: { max_attempts: 3, initial_interval: "1h", backoff_coefficient: 2, max_interval: "1d" },
        }],
      }),
      input: {},
    });
    const done = await station.time!.during(waitRun(engine, run.id));
    assertEquals(done.status, "failed");
    assertEquals(attempts(engine, run.id).map((a) => [a.attempt, a.status]), [[1, "failed"], [2, "failed"], [
      3,
      "failed",
    ]]);
    // Backoff of 1 h, then 2 h (each ±20% jitter), waited out on the virtual clock.
    const delays = engine.reads.events.after(run.id, 0).filter((e) => e.type === "step_retry_scheduled")
      .map((e) => JSON.parse(e.data!).delay_ms as number);
    assertEquals(delays.length, 2);
    const backoff = delays[0] + delays[1];
    assert(backoff >= 2.4 * HOUR, `backoff ${backoff} ms`);
    assert(
      span(done) >= backoff && span(done) < backoff + 60_000,
      `run took ${span(done)} ms of virtual time`,
    );
  } finally {
    await close();
  }
});

Deno.test("virtual time: a cron schedule fires at its virtual times, only while someone waits", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const { workflows } = station.ctx;
  const runs = () => station.ctx.engine.reads.runs.list({ workflowId: "daily", limit: 100 }).runs.reverse();
  try {
    workflows.save(
      WorkflowDefinition.parse({
        id: "daily",
        schedule: { cron: "0 9 * * *", timezone: "UTC" },
        states: [{ id: "say", type: "inject", data: { hello: true } }],
      }),
      { source: "api" },
    );
    const time = station.time!;
    await time.during(waitFor(() => runs().filter((r) => r.status === "completed").length >= 3, 15_000));
    const fired = runs().slice(0, 3);
    const scheduled = fired.map((r) => {
      const context = JSON.parse(station.ctx.engine.reads.scopes.get(r.id, "")!.context);
      return Date.parse(context.workflow.trigger.scheduled_at);
    });
    for (const [i, at] of scheduled.entries()) {
      assertEquals(new Date(at).getUTCHours(), 9, `fire ${i} at 09:00 UTC`);
      if (i > 0) assertEquals(at - scheduled[i - 1], 24 * HOUR, "a day apart");
      const created = Date.parse(fired[i].created_at);
      assert(created >= at && created - at < 60_000, `run ${i} started at its virtual fire time`);
    }
    // Nobody waits: the clock runs like the wall clock, so no fire a day away happens.
    const count = runs().length;
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(runs().length, count);
  } finally {
    await close();
  }
});
