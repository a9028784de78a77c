import type { Engine } from "../../../src/workflows/engine/engine.ts";
import { assert, assertEquals, assertRejectsWith } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "../helpers.ts";

const HOUR = 3_600_000;

/** When each run was admitted, from its ledger events: `run_admitted` if it waited, else `run_created`. */
function admittedAt(engine: Engine, runIds: string[]): number[] {
  return runIds.map((id) => {
    const events = engine.reads.events.after(id, 0, 10_000);
    const e = events.find((e) => e.type === "run_admitted") ?? events.find((e) => e.type === "run_created")!;
    return Date.parse(e.time);
  }).sort((a, b) => a - b);
}

/** Asserts no `period` holds more than `limit` of the admission times. */
function assertWithinLimit(times: number[], limit: number, period: number): void {
  for (let i = 0; i + limit < times.length; i++) {
    const gap = times[i + limit] - times[i];
    assert(
      gap >= period,
      `admissions ${i} and ${i + limit} only ${gap} ms apart (limit ${limit} per ${period} ms)`,
    );
  }
}

const step = [{ id: "say", type: "inject", data: { ok: true } }];

Deno.test("rate_limit: at most N admissions per period per key, the rest wait and all complete", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  const rated = def({
    id: "rated",
    rate_limit: { key: "${input.customer}", limit: 2, period: "1h" },
    states: step,
  });
  try {
    const acme = [];
    for (let i = 0; i < 7; i++) {
      acme.push(await engine.startRun({ definition: rated, input: { customer: "acme" } }));
    }
    const globex = [];
    for (let i = 0; i < 2; i++) {
      globex.push(await engine.startRun({ definition: rated, input: { customer: "globex" } }));
    }
    assertEquals(
      acme.map((r) => r.status === "waiting_for_concurrency"),
      [0, 1, 2, 3, 4, 5, 6].map((i) => i >= 2),
    );
    assert(globex.every((r) => r.status !== "waiting_for_concurrency"), "another key has its own window");
    const waiting = engine.reads.concurrency.position(acme[3].id)!;
    assertEquals({ ...waiting, until: undefined }, {
      key: "rate:rated/acme",
      position: 2,
      reason: "rate_limit",
      until: undefined,
    });
    assertEquals(Date.parse(waiting.until!) - Date.parse(acme[0].created_at), HOUR);
    const [event] = engine.reads.events.after(acme[2].id, 0).filter((e) =>
      e.type === "run_waiting_for_concurrency"
    );
    assertEquals(JSON.parse(event.data!).reason, "rate_limit");

    const runs = [...acme, ...globex].map((r) => r.id);
    await station.time!.during(
      waitFor(() => runs.every((id) => engine.reads.runs.get(id)!.status === "completed"), 30_000),
    );
    for (const id of runs) assertEquals(engine.reads.runs.get(id)!.status, "completed");
    const times = admittedAt(engine, acme.map((r) => r.id));
    assertWithinLimit(times, 2, HOUR);
    // The windows let runs in as soon as they allow: 7 runs at 2 per hour take three more windows.
    assertEquals(times.at(-1)! - times[0] < 4 * HOUR, true, `${times.at(-1)! - times[0]} ms`);
  } finally {
    await close();
  }
});

Deno.test("rate_limit with a concurrency key and priorities: both hold, higher priority is admitted first", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  const engine = station.ctx.engine;
  const both = def({
    id: "both",
    rate_limit: { limit: 1, period: "10m" },
    concurrency: [{ limit: 1 }],
    states: [{ id: "ask", type: "human_approval", message: "go?", approvers: ["ops"] }],
  });
  try {
    const holder = await engine.startRun({ definition: both, input: {} });
    const low = await engine.startRun({ definition: both, input: {}, priority: 1 });
    const high = await engine.startRun({ definition: both, input: {}, priority: 9 });
    await waitRun(engine, holder.id, ["waiting"]);
    // The window moves on, but the concurrency key is still held: nobody goes.
    const time = station.time!;
    time.clock.jumpTo(time.clock.now() + 11 * 60_000);
    await waitFor(() => engine.reads.concurrency.usage("rate:both", engine.clock.now()).held === 0);
    assertEquals(engine.reads.runs.get(high.id)!.status, "waiting_for_concurrency");
    const [approval] = engine.reads.approvals.list({ runId: holder.id });
    await engine.decide(approval.id, true, "ops");
    await waitRun(engine, high.id, ["waiting"]);
    assertEquals(engine.reads.runs.get(low.id)!.status, "waiting_for_concurrency");
    assertEquals(engine.reads.concurrency.position(low.id)!.key, "both");
  } finally {
    await close();
  }
});

Deno.test("rate_limit across a restart: the window and the waiting runs survive it", async () => {
  const home = await tempHome();
  const rated = def({ id: "slow", rate_limit: { limit: 1, period: "2s" }, states: step });
  try {
    let { station, close } = await startTestStation({ home });
    const runs = [];
    for (let i = 0; i < 3; i++) {
      runs.push((await station.ctx.engine.startRun({ definition: rated, input: {} })).id);
    }
    assertEquals(station.ctx.engine.reads.runs.get(runs[2])!.status, "waiting_for_concurrency");
    await close();
    ({ station, close } = await startTestStation({ home }));
    try {
      const engine = station.ctx.engine;
      for (const id of runs) assertEquals((await waitRun(engine, id)).status, "completed");
      assertWithinLimit(admittedAt(engine, runs), 1, 2000);
    } finally {
      await close();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("retry and fork take the run's keys like a start: a retried run of a limit-1 key waits for the holder", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const gated = def({
    id: "gated-retry",
    concurrency: [{ key: "${input.customer}", limit: 1 }],
    states: [
      { id: "prep", type: "inject", data: { prepared: true }, next: "ask" },
      { id: "ask", type: "human_approval", message: "go?", approvers: ["ops"] },
    ],
  });
  const approve = async (runId: string) => {
    await waitRun(engine, runId, ["waiting"]);
    const approval = engine.reads.approvals.list({ runId }).find((a) => a.status === "pending")!;
    await engine.decide(approval.id, true, "ops");
    return await waitRun(engine, runId);
  };
  try {
    const first = await engine.startRun({ definition: gated, input: { customer: "acme" } });
    await waitRun(engine, first.id, ["waiting"]);
    engine.cancel(first.id);
    const holder = await engine.startRun({ definition: gated, input: { customer: "acme" } });
    await waitRun(engine, holder.id, ["waiting"]);
    assertEquals((await engine.retry(first.id)).status, "waiting_for_concurrency");
    const fork = await engine.fork(holder.id, { step: "ask" });
    assertEquals(fork.status, "waiting_for_concurrency");
    assertEquals(engine.reads.concurrency.usage("gated-retry/acme", engine.clock.now()), {
      held: 1,
      waiting: 2,
    });

    assertEquals((await approve(holder.id)).status, "completed");
    // The retried run goes on at the step it stopped at, once it holds the key.
    assertEquals((await approve(first.id)).status, "completed");
    const types = eventTypes(engine, first.id);
    const retried = types.indexOf("run_retried");
    assertEquals(types.slice(retried, retried + 3), [
      "run_retried",
      "run_waiting_for_concurrency",
      "run_admitted",
    ]);
    assertEquals(attempts(engine, first.id).map((a) => a.step_id), ["prep", "ask", "ask"]);
    // The fork goes on at its fork point, its earlier step reused.
    assertEquals((await approve(fork.id)).status, "completed");
    assertEquals(attempts(engine, fork.id).map((a) => a.step_id), ["prep", "ask"]);
    assert(eventTypes(engine, fork.id).includes("run_admitted"));

    // A retry never takes a singleton key another run holds in `skip` mode.
    const single = def({
      id: "single-retry",
      singleton: { mode: "skip" },
      states: [{ id: "ask", type: "human_approval", message: "go?", approvers: ["ops"] }],
    });
    const old = await engine.startRun({ definition: single, input: {} });
    await waitRun(engine, old.id, ["waiting"]);
    engine.cancel(old.id);
    const active = await engine.startRun({ definition: single, input: {} });
    await assertRejectsWith(() => engine.retry(old.id), { code: "singleton_active" });
    assertEquals(engine.reads.runs.get(old.id)!.status, "canceled");
    engine.cancel(active.id);
  } finally {
    await close();
  }
});
