import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { RunRow } from "../../src/workflows/engine/ledger.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "../workflows/helpers.ts";

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
    // The run's row says completed before the engine has acked its last task; nothing may be left after that.
    await station.quiescence.settled(AbortSignal.timeout(10_000));
    assertEquals(station.quiescence.nextDue(), null);
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
    // Nobody waits: the clock runs like the wall clock, so no fire a day away happens (a jump already under
    // way when the wait ended may still land: count after it has).
    await new Promise((r) => setTimeout(r, 300));
    const count = runs().length;
    await new Promise((r) => setTimeout(r, 600));
    assertEquals(runs().length, count);
  } finally {
    await close();
  }
});

Deno.test("virtual time: two waiters at once — one signals its await, the other's times out", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  const time = station.time!;
  try {
    const definition = def({
      id: "pay-or-expire",
      states: [
        { id: "nap", type: "timer", duration: "2h", next: "paid" },
        { id: "paid", type: "await", event: "paid", timeout: "48h", onTimeout: "expired", next: "thanks" },
        { id: "thanks", type: "transform", expression: "{'paid_at': paid.received_at}" },
        { id: "expired", type: "inject", data: { expired: true } },
      ],
    });
    const payer = await engine.startRun({ definition, input: {} });
    const idler = await engine.startRun({ definition, input: {} });
    let signalled = false;
    const [paid, expired] = await Promise.all([
      time.during(waitRun(engine, payer.id), {
        beforeSkip: async () => {
          if (signalled || engine.reads.waits.ofRun(payer.id)[0]?.status !== "pending") return false;
          await engine.signal(payer.id, { name: "paid", data: { amount: 5 } });
          return (signalled = true);
        },
      }),
      time.during(waitRun(engine, idler.id)),
    ]);
    assertEquals(paid.status, "completed");
    const paidAt = Date.parse(JSON.parse(paid.result!).paid_at);
    assert(
      paidAt - Date.parse(paid.created_at) >= 2 * HOUR,
      "the signal arrived after the 2 h nap, virtually",
    );
    assert(span(paid) < 3 * HOUR, `paid within the nap and a little: ${span(paid)} ms`);
    assertEquals(JSON.parse(expired.result!), { expired: true });
    assert(
      span(expired) >= 50 * HOUR && span(expired) < 50 * HOUR + 60_000,
      `expired after ${span(expired)} ms`,
    );
    assertEquals(engine.reads.waits.ofRun(idler.id)[0].status, "timed_out");
  } finally {
    await close();
  }
});

Deno.test("virtual time: an agent's .prompt schedule fires at virtual times; its runs are stamped on that clock", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "report sent" }));
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    `${dir}/Daily.prompt`,
    `---\nmodel: openai/test-model\nschedule: {cron: "30 6 * * *", task: "send the report"}\n---\n` +
      `{{role "user"}}\n{{userInput}}\n`,
  );
  const { station, close } = await startTestStation({ home, time: "virtual" });
  const ledger = station.ctx.agents.ledger;
  const done = () => ledger.list({ agent: "Daily", limit: 50 }).runs.filter((r) => r.status === "completed");
  try {
    await station.time!.during(waitFor(() => done().length >= 2, 15_000));
    const [second, first] = done();
    for (const run of [first, second]) {
      const at = new Date(run.created_at);
      assertEquals([at.getUTCHours(), at.getUTCMinutes()], [6, 30], `${run.created_at} is a fire time`);
      assertEquals(run.trigger, "schedule");
    }
    assertEquals(
      Date.parse(second.created_at.slice(0, 16)) - Date.parse(first.created_at.slice(0, 16)),
      24 * HOUR,
    );
  } finally {
    await close();
    await model.close();
    await home.cleanup();
  }
});
