import { jetstreamManager } from "@nats-io/jetstream";
import { EngineCore } from "../../../src/workflows/engine/core.ts";
import { CONSUMER, STREAM } from "../../../src/workflows/engine/dispatch.ts";
import { Repository } from "../../../src/workflows/engine/repository.ts";
import { createRun } from "../../../src/workflows/engine/transitions.ts";
import { assertEquals } from "../../helpers/assert.ts";
import { startTestStation, type TestStation } from "../../helpers/station.ts";
import { attempts, def, waitRun } from "../helpers.ts";

const chain = (id: string, length: number) =>
  def({
    id,
    states: Array.from({ length }, (_, i) => ({
      id: `s${i}`,
      type: "transform",
      expression: "{'n': n + 1}",
      output: { n: "$.n" },
      ...(i < length - 1 ? { next: `s${i + 1}` } : {}),
    })),
  });

/** How many step messages the station's consumer has been handed so far. */
async function delivered(t: TestStation): Promise<number> {
  const jsm = await jetstreamManager(t.station.ctx.nats.nc);
  return (await jsm.consumers.info(STREAM, CONSUMER)).delivered.stream_seq;
}

Deno.test("eager dispatch: with a free slot each next step is claimed in the transaction that scheduled it, no message sent", async () => {
  const t = await startTestStation();
  try {
    const engine = t.station.ctx.engine;
    const before = { ...engine.stats, delivered: await delivered(t) };
    const run = await engine.startRun({ definition: chain("eager", 5), input: { n: 0 } });
    const done = await waitRun(engine, run.id);
    assertEquals(done.status, "completed");
    assertEquals(JSON.parse(done.result!).n, 5);
    assertEquals(attempts(engine, run.id).map((a) => [a.path, a.status, a.attempt]), [
      ["s0", "completed", 1],
      ["s1", "completed", 1],
      ["s2", "completed", 1],
      ["s3", "completed", 1],
      ["s4", "completed", 1],
    ]);
    assertEquals(
      engine.stats.eager - before.eager,
      5,
      "the first step with the run, each next with its predecessor",
    );
    assertEquals(engine.stats.executed - before.executed, 5);
    assertEquals(await delivered(t), before.delivered, "no step went through JetStream");
  } finally {
    await t.close();
  }
});

Deno.test("eager dispatch: with every slot taken steps go through the queue, and a long run yields its slot to a queued one", async () => {
  const t = await startTestStation({ env: { STN_ENGINE_WORKERS: "1" } });
  try {
    const engine = t.station.ctx.engine;
    const ended: string[] = [];
    engine.onRunEnd((id) => ended.push(id));
    const before = { ...engine.stats, delivered: await delivered(t) };
    // The long run takes the one slot; the short one's first step is published and waits for it.
    const [long, short] = await Promise.all([
      engine.startRun({ definition: chain("long", 80), input: { n: 0 } }),
      engine.startRun({ definition: chain("short", 2), input: { n: 0 } }),
    ]);
    assertEquals((await waitRun(engine, long.id)).status, "completed");
    assertEquals((await waitRun(engine, short.id)).status, "completed");
    assertEquals(ended, [short.id, long.id], "the short run did not wait for the long one to end");
    const through = (await delivered(t)) - before.delivered;
    assertEquals(engine.stats.executed - before.executed, 82);
    assertEquals(
      engine.stats.eager - before.eager,
      82 - through,
      "every step not pulled from the queue was eager",
    );
    assertEquals(
      through >= 2,
      true,
      `the short run's first step and the long run's yield went through the queue`,
    );
    for (const id of [long.id, short.id]) {
      const paths = attempts(engine, id).map((a) => a.path);
      assertEquals(paths.length, new Set(paths).size, "each step ran once");
    }
  } finally {
    await t.close();
  }
});

Deno.test("group commit: the commits asked for in one turn share a transaction; one that throws rolls back alone", async () => {
  const t = await startTestStation({ env: { STN_ENGINE_WORKERS: "0" } });
  try {
    const db = t.station.ctx.db;
    const core = new EngineCore(new Repository(db), t.station.ctx.nats.nc, {
      workers: 0,
      ackWaitMs: 30_000,
      maxDeliver: -1,
      leaseMs: 15_000,
      defaultTimeoutMs: 300_000,
    });
    const definition = chain("grouped", 1);
    const start = (id: string) => () =>
      createRun({
        id,
        definition,
        workflowVersion: null,
        input: {},
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      }, core.env());
    const changes = db.prepare("SELECT total_changes() AS n");
    const commits: number[] = [];
    // Written together: the first settles only after the third's rows are in (one flush, one transaction).
    const results = await Promise.allSettled([
      core.commitSoon(start("run_a")).then(() => commits.push(Number((changes.get() as { n: number }).n))),
      core.commitSoon(() => {
        start("run_b")();
        throw new Error("refused");
      }),
      core.commitSoon(start("run_c")).then(() => commits.push(Number((changes.get() as { n: number }).n))),
    ]);
    assertEquals(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assertEquals(commits[0], commits[1], "both were written before either settled: one transaction");
    const ids = db.prepare("SELECT id FROM workflow_runs WHERE id LIKE 'run_%' ORDER BY id").all()
      .map((r) => r.id);
    assertEquals(ids, ["run_a", "run_c"]);
  } finally {
    await t.close();
  }
});
