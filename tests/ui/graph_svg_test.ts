import { assertEquals } from "../helpers/assert.ts";
import { layout } from "../../src/ui/graph_svg.tsx";

Deno.test("state graph layout: layers by distance from the start, labelled branches, nested states counted, unreached last", () => {
  const { nodes, edges } = layout({
    states: [
      { id: "ask", type: "human_approval", message: "ok?", onReject: "no", next: "fan" },
      {
        id: "fan",
        type: "parallel",
        branches: [{
          states: [{ id: "a", type: "inject", data: {} }, { id: "b", type: "inject", data: {} }],
        }],
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
  assertEquals(nodes.map((n) => [n.id, n.layer, n.slot, n.inside]), [
    ["ask", 0, 0, 0],
    ["fan", 1, 0, 2],
    ["route", 2, 0, 0],
    ["no", 1, 1, 0],
    ["done", 3, 0, 0],
    ["orphan", 4, 0, 0],
  ]);
  assertEquals(edges, [
    { from: "ask", to: "fan", label: "" },
    { from: "ask", to: "no", label: "onReject" },
    { from: "fan", to: "route", label: "" },
    { from: "route", to: "done", label: "defaultNext" },
    { from: "route", to: "ask", label: "case 1" },
  ]);
});
