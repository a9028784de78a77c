import { assert, assertEquals } from "../helpers/assert.ts";
import { layout } from "../../src/ui/graph_svg.tsx";

const overlap = (
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
) => Math.abs(a.x - b.x) * 2 < a.width + b.width && Math.abs(a.y - b.y) * 2 < a.height + b.height;

Deno.test("state graph layout: labelled transitions, nested blocks as groups, start on top, no overlapping boxes", () => {
  const { nodes, groups, edges, width, height } = layout({
    states: [
      { id: "ask", type: "human_approval", message: "ok?", onReject: "no", next: "fan" },
      {
        id: "fan",
        type: "parallel",
        branches: [
          {
            states: [{ id: "a", type: "inject", data: {}, next: "b" }, { id: "b", type: "inject", data: {} }],
          },
          { states: [{ id: "c", type: "inject", data: {} }] },
        ],
        next: "route",
      },
      {
        id: "route",
        type: "switch",
        conditions: [{ if: "$x", next: "ask" }],
        defaultNext: "done",
      },
      { id: "no", type: "inject", data: {} },
      { id: "done", type: "inject", data: {} },
      { id: "orphan", type: "inject", data: {} },
    ],
  });
  assertEquals(
    edges.map((e) => [e.from, e.to, e.label, e.nested]),
    [
      ["ask", "fan", "", false],
      ["ask", "no", "onReject", false],
      ["fan", "route", "", false],
      ["fan", "c", "branch 2", true],
      ["a", "b", "", false],
      ["fan", "a", "branch 1", true],
      ["route", "done", "defaultNext", false],
      ["route", "ask", "case 1", false],
    ],
  );
  assertEquals(groups.map((g) => [g.id, g.label]), [
    ["fan/branches/1", "fan · branch 2"],
    ["fan/branches/0", "fan · branch 1"],
  ]);
  const at = new Map(nodes.map((n) => [n.id, n]));
  assertEquals(["a", "b", "c"].map((id) => at.get(id)!.group), [
    "fan/branches/0",
    "fan/branches/0",
    "fan/branches/1",
  ]);
  assert(
    at.get("ask")!.y < at.get("fan")!.y && at.get("fan")!.y < at.get("route")!.y,
    "ranks follow the flow",
  );
  nodes.forEach((a, i) =>
    nodes.slice(i + 1).forEach((b) => assert(!overlap(a, b), `${a.id} overlaps ${b.id}`))
  );
  for (const e of edges) {
    assert(e.points.length >= 2, `${e.from} to ${e.to} has a route`);
    if (e.label) {
      assert(e.labelBox && nodes.every((n) => !overlap(n, e.labelBox!)), `${e.label} is on its edge`);
    }
  }
  assert(
    nodes.every((n) => n.x + n.width / 2 <= width && n.y + n.height / 2 <= height),
    "the canvas holds all",
  );
});
