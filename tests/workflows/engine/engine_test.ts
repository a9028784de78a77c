import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation, type TestStation } from "../../helpers/station.ts";
import { attempts, def, eventTypes, waitRun } from "../helpers.ts";

async function withStation(fn: (t: TestStation) => Promise<void>): Promise<void> {
  const t = await startTestStation();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

Deno.test("transform → inject → switch chain runs end to end with the spec's data flow", async () => {
  await withStation(async ({ station }) => {
    const engine = station.ctx.engine;
    const ended: string[] = [];
    const unhook = engine.onRunEnd((id) => ended.push(id));
    const run = await engine.startRun({
      definition: def({
        id: "chain",
        states: [
          { id: "double", type: "transform", expression: "{ 'n': n * 2 }", next: "label" },
          {
            id: "label",
            type: "inject",
            data: { text: "n is ${double.n}", n: "${double.n}", literal: "$${x}" },
            output: { doubled: "$.n" },
            next: "route",
          },
          {
            id: "route",
            type: "switch",
            conditions: [{ if: "doubled > 10", next: "big" }, { if: "doubled > 4", next: "medium" }],
            defaultNext: "small",
          },
          { id: "big", type: "transform", expression: "'big'" },
          {
            id: "medium",
            type: "transform",
            expression: "{ 'size': 'medium', 'input': $input.n }",
            resultPath: "$.out.size",
          },
          { id: "small", type: "transform", expression: "'small'" },
        ],
      }),
      input: { n: 3 },
    });
    const done = await waitRun(engine, run.id);
    assertEquals(done.status, "completed");
    assertEquals(JSON.parse(done.result!), { size: "medium", input: 3 });
    assertEquals(ended, [run.id], "the run-end hook ran once, after the run ended");
    unhook();
    const rows = attempts(engine, run.id);
    assertEquals(rows.map((a) => [a.path, a.status, a.attempt]), [
      ["double", "completed", 1],
      ["label", "completed", 1],
      ["route", "completed", 1],
      ["medium", "completed", 1],
    ]);
    assertEquals(JSON.parse(rows[1].output!), { text: "n is 6", n: 6, literal: "${x}" });
    const scope = JSON.parse(engine.reads.scopes.get(run.id, "")!.context);
    assertEquals(scope.doubled, 6);
    assertEquals(scope.out, { size: { size: "medium", input: 3 } });
    assertEquals(scope.steps.route.output.next, "medium");
    assertEquals(scope.workflow, { input: { n: 3 }, run_id: run.id, workflow_id: "chain" });
    const types = eventTypes(engine, run.id);
    assertEquals(types[0], "run_created");
    assertEquals(types.at(-1), "run_completed");
    assertEquals(types.filter((t) => t === "step_completed").length, 4);
  });
});

Deno.test("a switch with no match and no default fails the run with no_matching_condition", async () => {
  await withStation(async ({ station }) => {
    const engine = station.ctx.engine;
    const run = await engine.startRun({
      definition: def({
        id: "nomatch",
        states: [{ id: "route", type: "switch", conditions: [{ if: "x = 1", next: "a" }] }, {
          id: "a",
          type: "transform",
          expression: "1",
        }],
      }),
      input: { x: 2 },
    });
    const done = await waitRun(engine, run.id);
    assertEquals(done.status, "failed");
    assertEquals(JSON.parse(done.error!).code, "no_matching_condition");
    assertEquals(JSON.parse(done.error!).step, "route");
  });
});

Deno.test("an agent step naming no agent of the environment fails with agent_not_found", async () => {
  await withStation(async ({ station }) => {
    const engine = station.ctx.engine;
    const run = await engine.startRun({
      definition: def({ id: "ag", states: [{ id: "ask", type: "agent", agent: "helper", task: "hi" }] }),
      input: {},
    });
    const done = await waitRun(engine, run.id);
    assertEquals(JSON.parse(done.error!).code, "agent_not_found");
    assert(JSON.parse(done.error!).message.includes("no agent helper in environment default"));
  });
});

Deno.test("switch dataPath, $ctx, timer until, and a loop that revisits a step", async () => {
  await withStation(async ({ station }) => {
    const engine = station.ctx.engine;
    const run = await engine.startRun({
      definition: def({
        id: "loopy",
        states: [
          { id: "soon", type: "timer", until: "${$fromMillis($millis() + 200)}", next: "bump" },
          {
            id: "bump",
            type: "transform",
            expression: "{'i': $ctx.i + 1}",
            output: { i: "$.i" },
            next: "check",
          },
          {
            id: "check",
            type: "switch",
            dataPath: "{'count': i, 'limit': limits.max}",
            conditions: [{ if: "count < limit", next: "bump" }],
            defaultNext: "done",
          },
          { id: "done", type: "inject", data: { i: "${i}" } },
        ],
      }),
      input: { i: 0, limits: { max: 3 } },
    });
    const done = await waitRun(engine, run.id);
    assertEquals(done.status, "completed", done.error ?? "");
    assertEquals(JSON.parse(done.result!).i, 3);
    const bumps = attempts(engine, run.id).filter((a) => a.step_id === "bump");
    assertEquals(bumps.map((a) => [a.visit, a.attempt, a.status]), [
      [1, 1, "completed"],
      [2, 1, "completed"],
      [
        3,
        1,
        "completed",
      ],
    ]);
    const timerRow = attempts(engine, run.id)[0];
    assert(Date.parse(timerRow.completed_at!) - Date.parse(timerRow.started_at!) >= 150);
  });
});
