import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { sleep } from "../../src/lib/async.ts";
import { connectNats } from "../../src/nats/connection.ts";
import { ManagedNatsServer } from "../../src/nats/server.ts";
import type { State } from "../../src/workflows/definition/schema.ts";
import { Engine } from "../../src/workflows/engine/engine.ts";
import type { Executor } from "../../src/workflows/executors/types.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { attempts, def, eventTypes, waitRun } from "./engine_helpers.ts";

/**
 * Long-running steps need a step type that takes time; until the sandbox capability lands, this
 * file plugs a real executor into the `sandbox` slot through the engine's documented `executors`
 * option: it sleeps `command[1]` milliseconds and honours its abort signal, as a sandbox exec must.
 */
const aborts: unknown[] = [];
const sleeper: Executor<Extract<State, { type: "sandbox" }>> = async (step, _scope, ctx) => {
  try {
    await sleep(Number(step.command![1]), ctx.signal);
  } catch (reason) {
    aborts.push(reason);
    throw reason;
  }
  return { kind: "completed", output: { slept: Number(step.command![1]) } };
};

const longStep = (ms: number, extra: Record<string, unknown> = {}) =>
  def({
    id: "long",
    states: [
      { id: "work", type: "sandbox", command: ["sleep", String(ms)], next: "after", ...extra },
      { id: "after", type: "transform", expression: "{'slept': work.slept}" },
    ],
  });

Deno.test("long-running steps: in-progress acks, abort on cancel, timeout with retry", async (t) => {
  const home = await tempHome();
  const server = await ManagedNatsServer.start({
    bin: "nats-server",
    storeDir: home.path("nats"),
    pidFile: home.path("run", "nats.pid"),
  });
  const nc = await connectNats(server.url);
  const db = openDatabase(join(home.home, "station.db"));
  // AckWait far below the step's duration: without in-progress acks JetStream would redeliver.
  const engine = new Engine(db, nc, {
    workers: 4,
    ackWaitMs: 400,
    maxDeliver: -1,
    leaseMs: 1000,
    defaultTimeoutMs: 60_000,
    executors: { sandbox: sleeper },
  });
  await engine.start();
  try {
    await t.step(
      "a step running 5× AckWait is executed once (in-progress acks keep the message)",
      async () => {
        const before = { ...engine.stats };
        const run = await engine.startRun({ definition: longStep(2000), input: {} });
        const done = await waitRun(engine, run.id);
        assertEquals(JSON.parse(done.result!), { slept: 2000 });
        assertEquals(engine.stats.executed - before.executed, 2, "work and after, once each");
        assertEquals(engine.stats.dropped - before.dropped, 0, "no redelivery reached the fence");
        assert(!eventTypes(engine, run.id).includes("step_reclaimed"));
      },
    );

    await t.step(
      "cancel during a long-running step: its executor is aborted, the run ends within a second",
      async () => {
        aborts.length = 0;
        const run = await engine.startRun({ definition: longStep(30_000), input: {} });
        await waitRun(engine, run.id, ["running"]);
        await sleep(300);
        const t0 = Date.now();
        engine.cancel(run.id, "test");
        await waitRun(engine, run.id, ["canceled"], 1000);
        assert(
          await (async () => {
            for (let i = 0; i < 20 && aborts.length === 0; i++) await sleep(50);
            return aborts.length === 1;
          })(),
          "the executor saw its abort signal",
        );
        assert(Date.now() - t0 < 1000);
        await sleep(300);
        assert(!attempts(engine, run.id).some((a) => a.step_id === "after"), "nothing after the cancel");
        assertEquals(attempts(engine, run.id)[0].status, "canceled");
      },
    );

    await t.step("a step over its timeout is failed (step_timeout) and retried per policy", async () => {
      const run = await engine.startRun({
        definition: longStep(5000, {
          timeout: "300ms",
          retry: { max_attempts: 3, initial_interval: "50ms" },
        }),
        input: {},
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "failed");
      assertEquals(JSON.parse(done.error!).code, "step_timeout");
      const rows = attempts(engine, run.id);
      assertEquals(rows.map((a) => [a.attempt, a.status, JSON.parse(a.error!).code]), [
        [1, "failed", "step_timeout"],
        [2, "failed", "step_timeout"],
        [3, "failed", "step_timeout"],
      ]);
    });
  } finally {
    await engine.stop();
    await nc.close();
    db.close();
    await server.stop();
    await home.cleanup();
  }
});
