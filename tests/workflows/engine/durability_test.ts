import { getRun, startRun, waitForRun } from "../../../src/client/workflow_runs.ts";
import { assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";

Deno.test("ledger.durability fsync: runs started over the API complete, through the queue and eagerly", async () => {
  const t = await startTestStation({ env: { STN_LEDGER_DURABILITY: "fsync", STN_ENGINE_WORKERS: "2" } });
  try {
    assertEquals(t.station.ctx.config.values.ledger.durability, "fsync");
    const definition = {
      id: "durable",
      states: [
        { id: "a", type: "transform", expression: "{'n': n + 1}", output: { n: "$.n" }, next: "b" },
        { id: "b", type: "transform", expression: "{'n': n * 10}", output: { n: "$.n" } },
      ],
    };
    // More runs than slots: some first steps go through JetStream (acked after the WAL sync), the rest eagerly.
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => startRun(t.client, { definition, input: { n: i } })),
    );
    for (const [i, run] of runs.entries()) {
      await waitForRun(t.client, run.id);
      const done = await getRun(t.client, run.id);
      assertEquals([done.status, done.result], ["completed", { n: (i + 1) * 10 }]);
    }
  } finally {
    await t.close();
  }
});
