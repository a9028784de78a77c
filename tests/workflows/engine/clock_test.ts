import { Engine } from "../../../src/workflows/engine/engine.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { def, eventTypes, waitRun } from "../helpers.ts";

const HOUR = 3_600_000;

Deno.test("the engine's clock is injectable: stamps, timeouts and timer firing follow it", async () => {
  const { station, close } = await startTestStation();
  // Only the engine under test consumes step messages.
  await station.ctx.engine.stop();
  let offset = 24 * HOUR;
  const engine = new Engine(station.ctx.db, station.ctx.nats.nc, {
    workers: 4,
    ackWaitMs: 30_000,
    maxDeliver: -1,
    leaseMs: 15_000,
    defaultTimeoutMs: 300_000,
    clock: { now: () => Date.now() + offset },
  });
  await engine.start();
  try {
    const run = await engine.startRun({
      definition: def({
        id: "ask",
        states: [
          { id: "ask", type: "human_approval", message: "ok?", timeout: "1h", onTimeout: "late" },
          { id: "late", type: "inject", data: { late: true } },
        ],
      }),
      input: {},
    });
    const ahead = (stamp: string) => Date.parse(stamp) - Date.now();
    assert(ahead(run.created_at) > 23 * HOUR, `created_at follows the clock: ${run.created_at}`);
    await waitRun(engine, run.id, ["waiting"]);
    const [approval] = engine.reads.approvals.list({ runId: run.id });
    assertEquals(Date.parse(approval.timeout_at) - Date.parse(approval.created_at), HOUR);
    assert(
      ahead(approval.timeout_at) > 24 * HOUR,
      `the timeout is an hour after the clock's now: ${approval.timeout_at}`,
    );

    // Two hours later by the clock: the approval timeout fires and the run routes to onTimeout.
    offset += 2 * HOUR;
    const done = await waitRun(engine, run.id, ["completed", "failed"], 10_000);
    assertEquals(done.status, "completed");
    assertEquals(JSON.parse(done.result!), { late: true });
    assert(eventTypes(engine, run.id).includes("approval_timed_out"));
    assertEquals(engine.reads.approvals.get(approval.id)!.status, "timed_out");
  } finally {
    await engine.stop();
    await close();
  }
});
