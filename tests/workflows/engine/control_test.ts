import { headers } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { StationError } from "../../../src/errors.ts";
import { stepSubject } from "../../../src/workflows/engine/dispatch.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "../helpers.ts";
import { permanentError } from "../../../src/workflows/engine/blocks.ts";

const approvalFlow = (extra: Record<string, unknown> = {}) =>
  def({
    id: "gate",
    states: [
      {
        id: "ask",
        type: "human_approval",
        message: "deploy ${env}?",
        approvers: ["ops"],
        next: "go",
        ...extra,
      },
      { id: "go", type: "transform", expression: "{'approved': ask.approved, 'by': ask.decided_by}" },
      { id: "rejected", type: "inject", data: { rejected: true } },
      { id: "late", type: "inject", data: { late: true } },
    ],
  });

Deno.test("timers, approvals, retries, timeouts, cancel, pause/resume and fencing", async (t) => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const pendingApproval = async (runId: string) => {
    await waitRun(engine, runId, ["waiting"]);
    return engine.reads.approvals.list({ runId })[0];
  };
  try {
    await t.step("timer waits durably, then continues", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "sleepy",
          states: [{ id: "nap", type: "timer", duration: "300ms", next: "after" }, {
            id: "after",
            type: "transform",
            expression: "{'fired': $exists(nap.fired_at)}",
          }],
        }),
        input: {},
      });
      await waitRun(engine, run.id, ["waiting"]);
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { fired: true });
      assert(eventTypes(engine, run.id).includes("timer_fired"));
    });

    await t.step("approve: the decision is the step output; a second decision is a 409", async () => {
      const run = await engine.startRun({ definition: approvalFlow(), input: { env: "prod" } });
      const approval = await pendingApproval(run.id);
      assertEquals(approval.message, "deploy prod?");
      assertEquals(JSON.parse(approval.approvers), ["ops"]);
      await engine.decide(approval.id, true, "alice", "ship it");
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { approved: true, by: "alice" });
      let err: unknown;
      await engine.decide(approval.id, false, "bob").catch((e) => (err = e));
      assert(err instanceof StationError && err.status === 409 && err.code === "approval_decided");
    });

    await t.step("reject routes to onReject; without onReject the run fails", async () => {
      const routed = await engine.startRun({
        definition: approvalFlow({ onReject: "rejected" }),
        input: { env: "x" },
      });
      await engine.decide((await pendingApproval(routed.id)).id, false, "carol", "no");
      assertEquals(JSON.parse((await waitRun(engine, routed.id)).result!), { rejected: true });
      assertEquals(JSON.parse(attempts(engine, routed.id)[0].output!).comment, "no");

      const plain = await engine.startRun({ definition: approvalFlow(), input: { env: "x" } });
      await engine.decide((await pendingApproval(plain.id)).id, false, "carol");
      const failed = await waitRun(engine, plain.id);
      assertEquals(failed.status, "failed");
      assertEquals(JSON.parse(failed.error!).code, "approval_rejected");
    });

    await t.step("approval timeout is enforced: onTimeout route, then approving is a 409", async () => {
      const run = await engine.startRun({
        definition: approvalFlow({ timeout: "300ms", onTimeout: "late" }),
        input: { env: "x" },
      });
      const approval = await pendingApproval(run.id);
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { late: true });
      const row = engine.reads.approvals.get(approval.id)!;
      assertEquals(row.status, "timed_out");
      let err: unknown;
      await engine.decide(approval.id, true, "alice").catch((e) => (err = e));
      assert(err instanceof StationError && err.status === 409);
    });

    await t.step("a step failing twice then succeeding shows three attempts", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "flaky",
          states: [{
            id: "try_it",
            type: "transform",
            expression: "$millis() - t0 < 750 ? $error('not yet') : {'ok': true}",
            retry: { max_attempts: 5, initial_interval: "500ms", backoff_coefficient: 1 },
          }],
        }),
        input: { t0: Date.now() },
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "completed");
      const rows = attempts(engine, run.id);
      assertEquals(rows.map((a) => [a.attempt, a.status]), [[1, "failed"], [2, "failed"], [3, "completed"]]);
      assertEquals(eventTypes(engine, run.id).filter((e) => e === "step_started").length, 3);
    });

    await t.step("non_retryable codes are not retried", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "nonretry",
          states: [{
            id: "route",
            type: "switch",
            conditions: [{ if: "false", next: "route" }],
            retry: { max_attempts: 3, initial_interval: "10ms", non_retryable: ["no_matching_condition"] },
          }],
        }),
        input: {},
      });
      await waitRun(engine, run.id);
      assertEquals(attempts(engine, run.id).length, 1);
    });

    await t.step(
      "a permanent error (stn's 4xx codes: config, validation, unknown reference) is not retried",
      async () => {
        const run = await engine.startRun({
          definition: def({
            id: "permanent",
            states: [{
              id: "ask",
              type: "agent",
              agent: "Nobody",
              task: "hello",
              retry: { max_attempts: 3, initial_interval: "10ms" },
            }],
          }),
          input: {},
        });
        const done = await waitRun(engine, run.id);
        assertEquals([done.status, JSON.parse(done.error!).code], ["failed", "agent_not_found"]);
        assertEquals(attempts(engine, run.id).length, 1);
        for (const code of ["image_not_allowed", "agent_not_found", "input_invalid", "config_invalid"]) {
          assertEquals(permanentError(code), true, code);
        }
        // An expression may read the clock or call $error() on purpose: its failure follows the policy.
        for (
          const code of ["docker_error", "step_timeout", "agent_output_invalid", "expression_failed", "mine"]
        ) {
          assertEquals(permanentError(code), false, code);
        }
      },
    );

    await t.step("a step over its timeout is failed and retried per policy", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "slow",
          states: [{
            id: "fan",
            type: "parallel",
            timeout: "300ms",
            retry: { max_attempts: 2, initial_interval: "10ms" },
            branches: [{ name: "b", states: [{ id: "nap", type: "timer", duration: "1m" }] }],
          }],
        }),
        input: {},
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "failed");
      assertEquals(JSON.parse(done.error!).code, "step_timeout");
      const top = attempts(engine, run.id).filter((a) => a.path === "fan");
      assertEquals(top.map((a) => [a.attempt, a.status]), [[1, "failed"], [2, "failed"]]);
      assert(
        attempts(engine, run.id).filter((a) => a.step_id === "nap").every((a) => a.status === "canceled"),
      );
    });

    for (
      const [what, states] of [
        ["a timer", [{ id: "wait", type: "timer", duration: "1m", next: "after" }]],
        ["an approval wait", [{ id: "wait", type: "human_approval", message: "ok?", next: "after" }]],
        ["a long-running step", [{
          id: "wait",
          type: "foreach",
          itemsPath: "[1,2]",
          iterator: { states: [{ id: "nap", type: "timer", duration: "1m" }] },
          next: "after",
        }]],
      ] as const
    ) {
      await t.step(`cancel during ${what}: canceled within a second, nothing after it runs`, async () => {
        const run = await engine.startRun({
          definition: def({
            id: "cancelme",
            states: [...states, { id: "after", type: "transform", expression: "1" }],
          }),
          input: {},
        });
        await waitRun(engine, run.id, ["waiting"]);
        const started = Date.now();
        engine.cancel(run.id, "test");
        const done = await waitRun(engine, run.id, ["canceled"], 1000);
        assert(Date.now() - started < 1000);
        await new Promise((r) => setTimeout(r, 200));
        const rows = attempts(engine, run.id);
        assert(!rows.some((a) => a.step_id === "after"), "nothing after the cancel");
        assert(rows.every((a) => a.status === "canceled" || a.status === "completed"), JSON.stringify(rows));
        assertEquals(
          engine.reads.timers.list({ runId: run.id, status: "pending" }),
          [],
        );
        assertEquals(
          engine.reads.approvals.list({ runId: run.id, status: "pending" }),
          [],
        );
        assertEquals(done.status, "canceled");
      });
    }

    await t.step("pause lets the current step finish and schedules nothing; resume continues", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "pausable",
          states: [{ id: "nap", type: "timer", duration: "300ms", next: "after" }, {
            id: "after",
            type: "transform",
            expression: "{'done': true}",
          }],
        }),
        input: {},
      });
      await waitRun(engine, run.id, ["waiting"]);
      engine.pause(run.id);
      await waitFor(() => eventTypes(engine, run.id).includes("timer_fired"), 3000);
      await new Promise((r) => setTimeout(r, 300));
      assertEquals(engine.reads.runs.get(run.id)!.status, "paused");
      assertEquals(attempts(engine, run.id).find((a) => a.step_id === "after")!.status, "scheduled");
      await engine.resume(run.id);
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { done: true });
    });

    await t.step("a duplicated or redelivered step message is dropped by fencing", async () => {
      const run = await engine.startRun({
        definition: def({ id: "dup", states: [{ id: "one", type: "transform", expression: "{'x': 1}" }] }),
        input: {},
      });
      await waitRun(engine, run.id);
      const before = { events: eventTypes(engine, run.id), dropped: engine.stats.dropped };
      const a = attempts(engine, run.id)[0];
      const js = jetstream(station.ctx.nats.nc);
      const m = { id: a.id, run: run.id, path: a.path, attempt: a.attempt };
      for (let i = 0; i < 3; i++) await js.publish(stepSubject(m), JSON.stringify(m), { headers: headers() });
      // A message that names the attempt wrongly is dropped too.
      await js.publish(stepSubject(m), JSON.stringify({ ...m, attempt: 7 }));
      assert(await waitFor(() => engine.stats.dropped >= before.dropped + 4, 5000), "all four dropped");
      assertEquals(eventTypes(engine, run.id), before.events);
      assertEquals(attempts(engine, run.id).map((x) => x.status), ["completed"]);
      assertEquals(engine.reads.runs.get(run.id)!.status, "completed");
    });
  } finally {
    await close();
  }
});
