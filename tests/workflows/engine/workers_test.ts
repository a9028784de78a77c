import { Engine } from "../../../src/workflows/engine/engine.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { attempts, def, waitRun } from "../helpers.ts";

Deno.test("two engines share the durable consumer: work is split, every step completes once", async () => {
  const { station, close } = await startTestStation();
  const first = station.ctx.engine;
  const second = new Engine(station.ctx.db, station.ctx.nats.nc, {
    workers: 4,
    ackWaitMs: 30_000,
    maxDeliver: -1,
    leaseMs: 15_000,
    defaultTimeoutMs: 300_000,
  });
  await second.start();
  try {
    const definition = def({
      id: "shared",
      states: [
        { id: "a", type: "transform", expression: "{'n': n + 1}", output: { n: "$.n" }, next: "b" },
        {
          id: "b",
          type: "foreach",
          itemsPath: "[1,2,3]",
          maxConcurrency: 3,
          iterator: { states: [{ id: "c", type: "transform", expression: "{'v': item * n}" }] },
        },
      ],
    });
    const before = [first.stats.executed, second.stats.executed];
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => first.startRun({ definition, input: { n: i } })),
    );
    for (const [i, run] of runs.entries()) {
      const done = await waitRun(first, run.id);
      assertEquals(done.status, "completed");
      assertEquals(
        JSON.parse(done.result!).results.map((r: { v: number }) => r.v),
        [1, 2, 3].map((x) => x * (i + 1)),
      );
      const completed = attempts(first, run.id).filter((a) => a.status === "completed").map((a) => a.path);
      assertEquals(completed.length, new Set(completed).size, "no step completed twice");
    }
    const did = [first.stats.executed - before[0], second.stats.executed - before[1]];
    assert(did[0] > 0 && did[1] > 0, `both engines executed steps: ${did}`);
  } finally {
    await second.stop();
    await close();
  }
});
