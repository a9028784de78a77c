import { getRun, startRun, waitForRun } from "../../../src/client/workflow_runs.ts";
import { listWorkers } from "../../../src/client/workers.ts";
import type { Engine } from "../../../src/workflows/engine/mod.ts";
import { WorkflowDefinition } from "../../../src/workflows/definition/schema.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { singleNats, startWorkerProcess } from "../../helpers/cluster.ts";
import { waitFor } from "../../helpers/stn.ts";
import { startTestStation } from "../../helpers/station.ts";

const twoSteps = {
  id: "durable",
  states: [
    { id: "a", type: "transform", expression: "{'n': n + 1}", output: { n: "$.n" }, next: "b" },
    { id: "b", type: "transform", expression: "{'n': n * 10}", output: { n: "$.n" } },
  ],
};

const chain = WorkflowDefinition.parse({
  id: "chain20",
  states: Array.from({ length: 20 }, (_, i) => ({
    id: `s${i}`,
    type: "transform",
    expression: "{'n': n + 1}",
    output: { n: "$.n" },
    ...(i < 19 ? { next: `s${i + 1}` } : {}),
  })),
});

/** Runs the 20-step chain once, in-process (no API answer syncs anything); returns the engine's counts during it. */
async function runChain(engine: Engine) {
  const before = { syncs: engine.syncs, ...engine.stats };
  const ended = new Promise<string>((resolve) => {
    const off = engine.onRunEnd((id) => (off(), resolve(id)));
  });
  const run = await engine.startRun({ definition: chain, input: { n: 0 } });
  assertEquals(await ended, run.id);
  assertEquals(engine.reads.runs.get(run.id)?.status, "completed");
  return {
    syncs: engine.syncs - before.syncs,
    started: engine.stats.started - before.started,
    unsynced: engine.stats.unsynced - before.unsynced,
  };
}

Deno.test("ledger.durability fsync: runs started over the API complete, through the queue and eagerly", async () => {
  const t = await startTestStation({ env: { STN_LEDGER_DURABILITY: "fsync", STN_ENGINE_WORKERS: "2" } });
  try {
    assertEquals(t.station.ctx.config.values.ledger.durability, "fsync");
    // More runs than slots: some first steps go through JetStream (acked after the WAL sync), the rest eagerly.
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => startRun(t.client, { definition: twoSteps, input: { n: i } })),
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

Deno.test("ledger.durability step: each step of a chain starts after one WAL sync that covers its predecessor; fsync's do not wait", async () => {
  const step = await startTestStation({ env: { STN_LEDGER_DURABILITY: "step" } });
  try {
    const counts = await runChain(step.station.ctx.engine);
    assertEquals(counts.started, 20);
    assertEquals(counts.unsynced, 0, "no step started before the commits it follows from were synced");
    // At least one sync covering each step, and at most one per step (plus the run's start).
    assert(counts.syncs >= 20 && counts.syncs <= 21, `syncs for 20 steps: ${counts.syncs}`);
  } finally {
    await step.close();
  }
  // The counter sees what `fsync` does not promise: its chain steps start before anything syncs them.
  const fsync = await startTestStation({ env: { STN_LEDGER_DURABILITY: "fsync" } });
  try {
    const counts = await runChain(fsync.station.ctx.engine);
    assertEquals(counts.started, 20);
    assert(counts.unsynced >= 15, `fsync: steps started unsynced ${counts.unsynced} of 20`);
    assert(counts.syncs <= 2, `fsync: syncs during the chain ${counts.syncs}`);
  } finally {
    await fsync.close();
  }
});

Deno.test("ledger.durability step: steps pulled from JetStream start only once synced; concurrent runs share syncs", async () => {
  const t = await startTestStation({ env: { STN_LEDGER_DURABILITY: "step", STN_ENGINE_WORKERS: "2" } });
  try {
    const engine = t.station.ctx.engine;
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => startRun(t.client, { definition: twoSteps, input: { n: i } })),
    );
    for (const [i, run] of runs.entries()) {
      await waitForRun(t.client, run.id);
      const done = await getRun(t.client, run.id);
      assertEquals([done.status, done.result], ["completed", { n: (i + 1) * 10 }]);
    }
    assertEquals(engine.stats.started, 24);
    assert(engine.stats.eager < 24, `some steps came through JetStream (eager: ${engine.stats.eager})`);
    assertEquals(engine.stats.unsynced, 0);
  } finally {
    await t.close();
  }
});

Deno.test("ledger.durability step: a stn worker is told to run a step only once its claim is synced", async () => {
  const nats = await singleNats();
  const t = await startTestStation({
    env: { STN_LEDGER_DURABILITY: "step", STN_ENGINE_WORKERS: "0", STN_NATS_URL: nats.url },
  });
  const worker = startWorkerProcess({
    env: t.home.env,
    natsUrl: nats.url,
    name: "w1",
    args: ["--port", "0"],
  });
  try {
    assert(
      await waitFor(async () => (await listWorkers(t.client)).workers.length === 1, 30_000),
      `the worker announces itself:\n${worker.stderr()}`,
    );
    const runs = await Promise.all(
      Array.from({ length: 3 }, (_, i) => startRun(t.client, { definition: twoSteps, input: { n: i } })),
    );
    for (const [i, run] of runs.entries()) {
      await waitForRun(t.client, run.id);
      assertEquals((await getRun(t.client, run.id)).result, { n: (i + 1) * 10 });
    }
    const stats = t.station.ctx.engine.stats;
    assertEquals([stats.remote, stats.started, stats.unsynced], [6, 6, 0]);
  } finally {
    await worker.stop();
    await t.close();
    await nats.stop();
  }
});
