import { sleep } from "../../../src/lib/async.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { waitFor } from "../../helpers/stn.ts";
import { startTestStation } from "../../helpers/station.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../../sandbox/backend.ts";
import { attempts, def, eventTypes, waitRun } from "../helpers.ts";

/** A run whose first step really runs `sleep SECONDS` in the run's sandbox container. */
const longStep = (seconds: number, extra: Record<string, unknown> = {}) =>
  def({
    id: "long",
    states: [
      { id: "work", type: "sandbox", command: ["sleep", String(seconds)], next: "after", ...extra },
      { id: "after", type: "transform", expression: "{'exit': work.exit_code}" },
    ],
  });

// AckWait far below the steps' duration: without in-progress acks JetStream would redeliver.
const CONFIG = SANDBOX_CONFIG + "engine:\n  workers: 4\n  ack_wait: 400ms\n  lease: 1s\n";

Deno.test("long-running steps: in-progress acks, abort on cancel, timeout with retry", async (t) => {
  const ts = await startTestStation({ configYaml: CONFIG });
  const { engine, sandbox } = ts.station.ctx;
  try {
    await t.step(
      "a step running 5× AckWait is executed once (in-progress acks keep the message)",
      async () => {
        const before = { ...engine.stats };
        const run = await engine.startRun({ definition: longStep(2), input: {} });
        const done = await waitRun(engine, run.id, undefined, 30_000);
        assertEquals(done.status, "completed", done.error ?? "");
        assertEquals(JSON.parse(done.result!), { exit: 0 });
        assertEquals(engine.stats.executed - before.executed, 2, "work and after, once each");
        assertEquals(engine.stats.dropped - before.dropped, 0, "no redelivery reached the fence");
        assert(!eventTypes(engine, run.id).includes("step_reclaimed"));
      },
    );

    await t.step(
      "cancel during a long-running step: the command is killed, the run ends within a second",
      async () => {
        const run = await engine.startRun({ definition: longStep(300), input: {} });
        assert(await waitFor(() => sandbox!.list().some((s) => s.run_id === run.id), 15_000));
        const session = sandbox!.list().find((s) => s.run_id === run.id)!;
        const sleeping = async () =>
          (await sandbox!.exec(session.id, { cmd: "ps -o args | grep -c '^sleep 300'" })).stdout.trim();
        assert(await waitFor(async () => (await sleeping()) === "1", 10_000), "the command runs");
        const t0 = Date.now();
        engine.cancel(run.id, "test");
        await waitRun(engine, run.id, ["canceled"], 1000);
        assert(Date.now() - t0 < 1000, "canceled within a second");
        await sleep(300);
        assert(!attempts(engine, run.id).some((a) => a.step_id === "after"), "nothing after the cancel");
        assertEquals(attempts(engine, run.id)[0].status, "canceled");
        assert(
          await waitFor(() => !sandbox!.list().some((s) => s.run_id === run.id), 10_000),
          "container removed",
        );
      },
    );

    await t.step("a step over its timeout is failed (step_timeout) and retried per policy", async () => {
      const run = await engine.startRun({
        definition: longStep(5, { timeout: "300ms", retry: { max_attempts: 3, initial_interval: "50ms" } }),
        input: {},
      });
      const done = await waitRun(engine, run.id, undefined, 30_000);
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
    await removeStationContainers(ts.home.path("stn.db"));
    await ts.close();
  }
});
