import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { attempts, def, waitRun } from "../helpers.ts";

Deno.test("parallel, foreach and try run their blocks as durable child steps", async (t) => {
  const { station, close } = await startTestStation();
  const engine = station.ctx.engine;
  try {
    await t.step("parallel joins branches into {name: output}; nested transitions route", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "par",
          states: [{
            id: "fan",
            type: "parallel",
            branches: [
              {
                name: "a",
                states: [
                  { id: "one", type: "transform", expression: "{'v': x + 1}", next: "pick" },
                  {
                    id: "pick",
                    type: "switch",
                    conditions: [{ if: "one.v = 2", next: "two" }],
                    defaultNext: "three",
                  },
                  { id: "two", type: "inject", data: { got: "${one.v}" } },
                  { id: "three", type: "inject", data: { got: "wrong" } },
                ],
              },
              { name: "b", states: [{ id: "only", type: "transform", expression: "{'w': x * 10}" }] },
            ],
            next: "after",
          }, { id: "after", type: "transform", expression: "{'sum': fan.a.got + fan.b.w}" }],
        }),
        input: { x: 1 },
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "completed");
      assertEquals(JSON.parse(done.result!), { sum: 12 });
      const paths = attempts(engine, run.id).map((a) => `${a.path}:${a.status}`);
      for (
        const p of [
          "fan/a/one:completed",
          "fan/a/pick:completed",
          "fan/a/two:completed",
          "fan/b/only:completed",
        ]
      ) {
        assert(paths.includes(p), `${p} in ${paths}`);
      }
      assert(!paths.some((p) => p.startsWith("fan/a/three")));
      // The branch's writes stay in the branch: only its output leaves it.
      const top = JSON.parse(engine.reads.scopes.get(run.id, "")!.context);
      assertEquals(top.one, undefined);
    });

    await t.step("foreach: one iteration per item, in item order, maxConcurrency honoured", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "loop",
          states: [{
            id: "each",
            type: "foreach",
            itemsPath: "items",
            itemName: "it",
            maxConcurrency: 2,
            iterator: {
              states: [{
                id: "sq",
                type: "transform",
                expression: "{'v': it * it, 'i': _index, 'of': _total}",
              }],
            },
          }],
        }),
        input: { items: [1, 2, 3, 4, 5] },
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "completed");
      const result = JSON.parse(done.result!);
      assertEquals(result.count, 5);
      assertEquals(result.results.map((r: { v: number }) => r.v), [1, 4, 9, 16, 25]);
      assertEquals(result.results[4], { v: 25, i: 4, of: 5 });
      // Never more than two iterations in flight: check from the attempt timestamps.
      const rows = attempts(engine, run.id).filter((a) => a.step_id === "sq");
      for (const r of rows) {
        const overlapping = rows.filter((o) =>
          o.started_at! <= r.started_at! && o.completed_at! > r.started_at!
        );
        assert(overlapping.length <= 2, `at most 2 at once, got ${overlapping.length}`);
      }
    });

    await t.step("foreach over an empty list completes with {results: [], count: 0}", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "empty",
          states: [{
            id: "each",
            type: "foreach",
            itemsPath: "items",
            iterator: { states: [{ id: "x", type: "transform", expression: "1" }] },
          }],
        }),
        input: { items: [] },
      });
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { results: [], count: 0 });
    });

    await t.step(
      "foreach whose itemsPath matches nothing fails with items_not_found naming the path",
      async () => {
        const run = await engine.startRun({
          definition: def({
            id: "missing",
            states: [{
              id: "each",
              type: "foreach",
              itemsPath: "ctx.services",
              iterator: { states: [{ id: "x", type: "transform", expression: "1" }] },
            }],
          }),
          input: { services: ["a"] },
        });
        const done = await waitRun(engine, run.id);
        assertEquals(done.status, "failed");
        const error = JSON.parse(done.error!);
        assertEquals(error.code, "items_not_found");
        assert(error.message.includes('"ctx.services"'), error.message);
      },
    );

    await t.step("a failed branch fails the parallel step and cancels its siblings", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "failfast",
          states: [{
            id: "fan",
            type: "parallel",
            branches: [
              {
                name: "bad",
                states: [
                  { id: "pause", type: "timer", duration: "300ms", next: "boom" },
                  { id: "boom", type: "switch", conditions: [{ if: "false", next: "boom" }] },
                ],
              },
              {
                name: "slow",
                states: [{ id: "wait", type: "timer", duration: "30s", next: "never" }, {
                  id: "never",
                  type: "transform",
                  expression: "1",
                }],
              },
            ],
          }],
        }),
        input: {},
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "failed");
      assertEquals(JSON.parse(done.error!).code, "no_matching_condition");
      const rows = attempts(engine, run.id);
      assertEquals(rows.find((a) => a.path === "fan/slow/wait")!.status, "canceled");
      assert(!rows.some((a) => a.path === "fan/slow/never"));
      const timers = engine.reads.timers.list({ runId: run.id, kind: "timer" });
      assertEquals(timers.map((x) => x.status).sort(), ["canceled", "fired"]);
    });

    await t.step("try: a failure sets _error and runs catch, finally always runs", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "trycatch",
          states: [{
            id: "guard",
            type: "try",
            try: { states: [{ id: "bad", type: "switch", conditions: [{ if: "false", next: "bad" }] }] },
            catch: {
              states: [{
                id: "handle",
                type: "inject",
                data: { caught: "${_error.code}", at: "${_error.step}" },
              }],
            },
            finally: { states: [{ id: "cleanup", type: "inject", data: { cleaned: true } }] },
            next: "after",
          }, {
            id: "after",
            type: "transform",
            expression: "{'caught': guard.caught, 'cleaned': steps.guard.status}",
          }],
        }),
        input: {},
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "completed");
      assertEquals(JSON.parse(done.result!), { caught: "no_matching_condition", cleaned: "completed" });
      const paths = attempts(engine, run.id).map((a) => `${a.path}:${a.status}`);
      assert(paths.includes("guard/catch/handle:completed"), String(paths));
      assert(paths.includes("guard/finally/cleanup:completed"), String(paths));
    });

    await t.step("try without catch: finally runs and the failure propagates", async () => {
      const run = await engine.startRun({
        definition: def({
          id: "tryfinally",
          states: [{
            id: "guard",
            type: "try",
            try: { states: [{ id: "bad", type: "switch", conditions: [{ if: "false", next: "bad" }] }] },
            finally: { states: [{ id: "cleanup", type: "inject", data: { cleaned: true } }] },
          }],
        }),
        input: {},
      });
      const done = await waitRun(engine, run.id);
      assertEquals(done.status, "failed");
      assert(
        attempts(engine, run.id).some((a) => a.path === "guard/finally/cleanup" && a.status === "completed"),
      );
    });
  } finally {
    await close();
  }
});
