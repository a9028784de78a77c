/** A workflow's states as an SVG graph, for the dashboard's workflow page. */

import { blocks, transitions } from "../workflows/definition/graph.ts";

type Obj = Record<string, unknown>;

interface Node {
  id: string;
  type: string;
  /** How many states its nested blocks hold (parallel branches, a foreach body, try/catch). */
  inside: number;
  layer: number;
  slot: number;
}
interface Edge {
  from: string;
  to: string;
  label: string;
}

const W = 170, H = 46, GAP_X = 40, GAP_Y = 46, PAD = 20;

/** The top-level states in layers by distance from the start state (unreached ones last), and their edges. */
export function layout(def: { start?: string; states: Obj[] }): { nodes: Node[]; edges: Edge[] } {
  const states = def.states.filter((s) => typeof s.id === "string");
  const edges: Edge[] = states.flatMap((s, i) =>
    transitions(s, `/states/${i}`).map((t) => {
      const field = t.path.split("/").slice(3).join(".").replace(/\.next$/, "");
      const label = field.replace(/^conditions\.(\d+)$/, (_, n) => `case ${Number(n) + 1}`);
      return { from: String(s.id), to: t.target, label: label === "next" ? "" : label };
    })
  ).filter((e) => states.some((s) => s.id === e.to));
  const depth = new Map<string, number>();
  const start = def.start ?? String(states[0]?.id);
  const queue = [start];
  depth.set(start, 0);
  while (queue.length) {
    const id = queue.shift()!;
    for (const e of edges.filter((e) => e.from === id && !depth.has(e.to))) {
      depth.set(e.to, depth.get(id)! + 1);
      queue.push(e.to);
    }
  }
  const last = Math.max(0, ...depth.values()) + 1;
  const perLayer = new Map<number, number>();
  const nodes = states.map((s) => {
    const layer = depth.get(String(s.id)) ?? last;
    const slot = perLayer.get(layer) ?? 0;
    perLayer.set(layer, slot + 1);
    const inside = blocks(s, "").reduce(
      (n, b) => n + (Array.isArray(b.block.states) ? b.block.states.length : 0),
      0,
    );
    return { id: String(s.id), type: String(s.type ?? "?"), inside, layer, slot };
  });
  return { nodes, edges };
}

const pos = (n: Node) => ({ x: PAD + n.slot * (W + GAP_X), y: PAD + n.layer * (H + GAP_Y) });

/** The state graph as an SVG diagram (our own layout: no library, no script), with a text alternative. */
export function StateGraph(props: { definition: { start?: string; states: Obj[] } }) {
  const { nodes, edges } = layout(props.definition);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const width = PAD * 2 + Math.max(1, ...nodes.map((n) => n.slot + 1)) * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(1, ...nodes.map((n) => n.layer + 1)) * (H + GAP_Y) - GAP_Y;
  const description = edges.map((e) => `${e.from} to ${e.to}${e.label ? ` (${e.label})` : ""}`).join("; ");
  return (
    <div class="graph">
      <svg
        xmlns="http://www.w3.org/2000/svg"
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-labelledby="graph-title graph-desc"
      >
        <title id="graph-title">State graph: {nodes.length} states</title>
        <desc id="graph-desc">{description || "no transitions"}</desc>
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="10"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" fill="#57606a" />
          </marker>
        </defs>
        {edges.map((e) => {
          const a = pos(byId.get(e.from)!), b = pos(byId.get(e.to)!);
          const forward = byId.get(e.to)!.layer > byId.get(e.from)!.layer;
          const [x1, y1] = [a.x + W / 2, a.y + H];
          const [x2, y2] = forward ? [b.x + W / 2, b.y] : [b.x + W, b.y + H / 2];
          const d = forward
            ? `M${x1},${y1} L${x2},${y2}`
            : `M${a.x + W},${a.y + H / 2} C${a.x + W + 60},${a.y + H / 2} ${x2 + 60},${y2} ${x2},${y2}`;
          return (
            <g>
              <path d={d} fill="none" stroke="#57606a" stroke-width="1.5" marker-end="url(#arrow)" />
              {e.label
                ? (
                  <text x={x1 + (x2 - x1) * 0.65 + 4} y={y1 + (y2 - y1) * 0.65} font-size="11" fill="#7a4d00">
                    {e.label}
                  </text>
                )
                : null}
            </g>
          );
        })}
        {nodes.map((n) => {
          const p = pos(n);
          return (
            <g>
              <rect x={p.x} y={p.y} width={W} height={H} rx="6" fill="#ffffff" stroke="#0a58ca" />
              <text x={p.x + W / 2} y={p.y + 19} text-anchor="middle" font-size="13" font-weight="600">
                {n.id}
              </text>
              <text x={p.x + W / 2} y={p.y + 35} text-anchor="middle" font-size="11" fill="#57606a">
                {n.inside ? `${n.type} · ${n.inside} inside` : n.type}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
