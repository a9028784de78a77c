import { jetstreamManager } from "@nats-io/jetstream";
import { CONSUMER, STREAM } from "../../src/workflows/engine/dispatch.ts";
import { assertEquals } from "../helpers/assert.ts";
import { startTestStation, type TestStation } from "../helpers/station.ts";
import { attempts, def, waitRun } from "./engine_helpers.ts";

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
