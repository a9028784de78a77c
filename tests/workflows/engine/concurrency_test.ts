import { agedPriority, blockedKeys, pickAdmissions, type Waiter } from "../../../src/lib/concurrency.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { def, eventTypes, waitRun } from "../helpers.ts";

const w = (seq: number, run: string, key: string, lim: number, priority = 5, queued = 0): Waiter => ({
  seq,
  run_id: run,
  key,
  lim,
  priority,
  queued_ms: queued,
});

Deno.test("concurrency admission as a table: FIFO within a key, priority, aging, every key must fit", () => {
  const none = () => 0;
  const rows: [string, Waiter[], (k: string) => number, number, string[]][] = [
    ["FIFO within a key", [w(1, "a", "k", 1), w(2, "b", "k", 1)], none, 0, ["a"]],
    ["a key with room takes several", [w(1, "a", "k", 2), w(2, "b", "k", 2), w(3, "c", "k", 2)], none, 0, [
      "a",
      "b",
    ]],
    ["a full key admits none", [w(1, "a", "k", 1)], () => 1, 0, []],
    ["higher priority first", [w(1, "a", "k", 1, 5), w(2, "b", "k", 1, 9)], none, 0, ["b"]],
    [
      "aging: a long wait beats a newer higher priority",
      [
        w(1, "a", "k", 1, 0, 0),
        w(2, "b", "k", 1, 9, 10 * 60_000),
      ],
      none,
      10 * 60_000,
      ["a"],
    ],
    [
      "every key of a run must fit",
      [w(1, "a", "k", 1), w(2, "a", "all", 5)],
      (k) => (k === "all" ? 5 : 0),
      0,
      [],
    ],
    [
      "a blocked run blocks its keys for those after it",
      [
        w(1, "a", "x", 1),
        w(2, "a", "y", 1),
        w(3, "b", "y", 1),
      ],
      (k) => (k === "x" ? 1 : 0),
      0,
      [],
    ],
    ["other keys go on", [w(1, "a", "x", 1), w(2, "b", "y", 1)], (k) => (k === "x" ? 1 : 0), 0, ["b"]],
  ];
  for (const [name, waiters, held, now, want] of rows) {
    assertEquals(pickAdmissions(waiters, held, now), want, name);
  }
  assertEquals(agedPriority(3, 0, 59_999), 3);
  assertEquals(agedPriority(3, 0, 120_000), 5);
  const usage = (held: number, waiting: number) => () => ({ held, waiting });
  assertEquals(blockedKeys([{ key: "k", limit: 2 }], usage(1, 0)), []);
  assertEquals(blockedKeys([{ key: "k", limit: 2 }], usage(2, 0)), [{ key: "k", limit: 2 }]);
  // Runs already waiting go first, even when a slot is free for a moment.
  assertEquals(blockedKeys([{ key: "k", limit: 2 }], usage(0, 1)), [{ key: "k", limit: 2 }]);
});

Deno.test("concurrency keys in the engine: waiting runs, cancel while waiting, admission by priority", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const gated = def({
    id: "gated",
    concurrency: [{ key: "${input.customer}", limit: 1 }],
    states: [{ id: "ask", type: "human_approval", message: "go?", approvers: ["ops"], next: "done" }, {
      id: "done",
      type: "transform",
      expression: "{'customer': customer}",
    }],
  });
  const approve = async (runId: string) => {
    await waitRun(engine, runId, ["waiting"]);
    const [approval] = engine.reads.approvals.list({ runId });
    await engine.decide(approval.id, true, "ops");
    return await waitRun(engine, runId);
  };
  try {
    const holder = await engine.startRun({ definition: gated, input: { customer: "acme" } });
    const other = await engine.startRun({ definition: gated, input: { customer: "globex" } });
    const a = await engine.startRun({ definition: gated, input: { customer: "acme" } });
    const b = await engine.startRun({ definition: gated, input: { customer: "acme" }, priority: 9 });
    const c = await engine.startRun({ definition: gated, input: { customer: "acme" } });
    for (const r of [a, b, c]) assertEquals(r.status, "waiting_for_concurrency");
    await waitRun(engine, other.id, ["waiting"]); // another key is not held up
    const listed = engine.reads.runs.list({ status: "waiting_for_concurrency", limit: 10 }).runs.map((r) =>
      r.id
    );
    assertEquals(listed.sort(), [a.id, b.id, c.id].sort());
    assertEquals(engine.reads.concurrency.usage("gated/acme"), { held: 1, waiting: 3 });
    assertEquals(engine.reads.concurrency.position(c.id), { key: "gated/acme", position: 3 });
    assertEquals(engine.reads.concurrency.waitingRuns(), [{ workflow_id: "gated", n: 3 }]);

    engine.pause(a.id);
    assertEquals((await engine.resume(a.id)).status, "waiting_for_concurrency");
    engine.cancel(c.id);
    assertEquals(engine.reads.runs.get(c.id)!.status, "canceled");
    assertEquals(engine.reads.concurrency.usage("gated/acme"), { held: 1, waiting: 2 });

    assertEquals((await approve(holder.id)).status, "completed");
    await waitRun(engine, b.id, ["waiting"]); // priority 9 goes before the older a
    assertEquals(engine.reads.runs.get(a.id)!.status, "waiting_for_concurrency");
    await approve(b.id);
    assertEquals((await approve(a.id)).status, "completed");
    assertEquals(eventTypes(engine, a.id).slice(0, 5), [
      "run_created",
      "run_waiting_for_concurrency",
      "run_paused",
      "run_resumed",
      "run_admitted",
    ]);
    await approve(other.id);
    assertEquals(engine.reads.concurrency.usage("gated/acme"), { held: 0, waiting: 0 });

    // Runs an event's triggers start obey the keys too, two of one key in the same event included.
    const sent = await engine.sendEvent({
      name: "order.placed",
      data: {},
      source: "api",
      starts: [0, 1].map(() => ({
        definition: gated,
        workflowVersion: null,
        input: { customer: "initech" },
      })),
    });
    const [first, second] = JSON.parse(sent.event.started) as { run_id: string }[];
    await waitRun(engine, first.run_id, ["waiting"]);
    assertEquals(engine.reads.runs.get(second.run_id)!.status, "waiting_for_concurrency");
    await approve(first.run_id);
    await approve(second.run_id);
  } finally {
    await close();
  }
});

Deno.test("singleton: skip answers the active run; cancel_previous cancels it; events record a skipped start", async () => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  const flow = (id: string, mode: "skip" | "cancel_previous") =>
    def({
      id,
      singleton: { key: "${input.repo}", mode },
      states: [{ id: "ask", type: "human_approval", message: "deploy?", approvers: ["ops"] }],
    });
  try {
    const skip = flow("deploy", "skip");
    const first = await engine.startRun({ definition: skip, input: { repo: "api" } });
    await waitRun(engine, first.id, ["waiting"]);
    assertEquals((await engine.startRun({ definition: skip, input: { repo: "api" } })).id, first.id);
    const other = await engine.startRun({ definition: skip, input: { repo: "web" } });
    assert(other.id !== first.id, "another key starts its own run");
    const sent = await engine.sendEvent({
      name: "push",
      data: {},
      source: "api",
      starts: [{ definition: skip, workflowVersion: null, input: { repo: "api" } }],
    });
    assertEquals(JSON.parse(sent.event.started), [
      { workflow_id: "deploy", error: `singleton: run ${first.id} is active; skipped` },
    ]);

    const latest = flow("rebuild", "cancel_previous");
    const old = await engine.startRun({ definition: latest, input: { repo: "api" } });
    await waitRun(engine, old.id, ["waiting"]);
    const fresh = await engine.startRun({ definition: latest, input: { repo: "api" } });
    assertEquals(engine.reads.runs.get(old.id)!.status, "canceled");
    await waitRun(engine, fresh.id, ["waiting"]);
    // Once the key's run ended, a start runs again.
    engine.cancel(first.id);
    assert((await engine.startRun({ definition: skip, input: { repo: "api" } })).id !== first.id);
  } finally {
    await close();
  }
});
