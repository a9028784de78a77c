/** A workflow's states as an SVG graph laid out by dagre, for the dashboard's workflow page. */

import dagre from "@dagrejs/dagre";
import { blocks, transitions } from "../workflows/definition/graph.ts";

type Obj = Record<string, unknown>;
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A state's box (centre and size, as dagre gives them); `group` names the block group it sits in. */
export interface GraphNode extends Box {
  id: string;
  type: string;
  group?: string;
}
/** A nested block (a parallel branch, a foreach body, try/catch/finally) drawn around its states. */
export interface GraphGroup extends Box {
  id: string;
  label: string;
  group?: string;
}
/** A transition: `label` names the field that takes it (`case 1`, `onReject`, `branch 1`, `catch`…). */
export interface GraphEdge {
  from: string;
  to: string;
  label: string;
  /** Into a nested block (drawn dashed) rather than a transition. */
  nested: boolean;
  points: Array<{ x: number; y: number }>;
  labelBox?: Box;
}
/** A laid-out state graph. */
export interface GraphLayout {
  nodes: GraphNode[];
  groups: GraphGroup[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

const NODE_H = 46, MARGIN = 20, CHAR_W = 8, LABEL_CHAR_W = 6.5, LABEL_H = 16;

const nodeWidth = (id: string, type: string) => Math.max(150, 24 + CHAR_W * Math.max(id.length, type.length));

/** A block's label from its pointer: `/branches/0` → `branch 1`, `/iterator` → `iterator`, `/try` → `try`. */
const blockLabel = (path: string) =>
  path.replace(/^\/branches\/(\d+)$/, (_, n) => `branch ${Number(n) + 1}`).replace(/^\//, "");

/** A transition's label from its pointer: `next` is unlabelled, `conditions/0/next` → `case 1`. */
const edgeLabel = (path: string) => {
  const field = path.split("/").slice(3).join(".").replace(/\.next$/, "");
  return field === "next" ? "" : field.replace(/^conditions\.(\d+)$/, (_, n) => `case ${Number(n) + 1}`);
};

/**
 * Lays out every state (nested ones inside a group per block, the group beside its owning state) with
 * dagre: ranks top to bottom, edges routed around boxes, labels on their edges.
 */
export function layout(def: { start?: string; states: Obj[] }): GraphLayout {
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 30, ranksep: 40, edgesep: 12, marginx: MARGIN, marginy: MARGIN });
  const types = new Map<string, string>();
  const pending: Array<{ from: string; to: string; label: string; nested: boolean }> = [];
  const groupLabels = new Map<string, string>();

  const walk = (states: unknown, group: string | undefined) => {
    if (!Array.isArray(states)) return;
    const list = states.filter((s): s is Obj =>
      typeof s === "object" && s !== null && typeof s.id === "string"
    );
    list.forEach((s, i) => {
      const id = String(s.id), type = String(s.type ?? "?");
      types.set(id, type);
      g.setNode(id, { width: nodeWidth(id, type), height: NODE_H });
      if (group) g.setParent(id, group);
      for (const t of transitions(s, `/states/${i}`)) {
        pending.push({ from: id, to: t.target, label: edgeLabel(t.path), nested: false });
      }
      // dagre's ordering tends to put the first block it is given rightmost: given last-first, the
      // blocks of the examples read left to right (branch 1, 2, 3; try, catch, finally).
      for (const b of blocks(s, "").reverse()) {
        const gid = `${id}${b.path}`;
        const inner = Array.isArray(b.block.states) ? b.block.states as Obj[] : [];
        const first = typeof b.block.start === "string" ? b.block.start : inner[0]?.id;
        if (typeof first !== "string") continue;
        groupLabels.set(gid, `${id} · ${blockLabel(b.path)}`);
        g.setNode(gid, {});
        if (group) g.setParent(gid, group);
        walk(inner, gid);
        pending.push({ from: id, to: first, label: blockLabel(b.path), nested: true });
      }
    });
  };
  walk(def.states, undefined);

  const edges = pending.filter((e) => types.has(e.to));
  edges.forEach((e, i) => {
    const label = e.label ? { width: e.label.length * LABEL_CHAR_W + 8, height: LABEL_H, labelpos: "c" } : {};
    g.setEdge(e.from, e.to, { ...label, minlen: 1 }, `e${i}`);
  });
  dagre.layout(g);

  const parent = (id: string) => (g.parent(id) as string | undefined) || undefined;
  const nodes: GraphNode[] = [...types].map(([id, type]) => {
    const n = g.node(id);
    return { id, type, group: parent(id), x: n.x, y: n.y, width: n.width, height: n.height };
  });
  const groups: GraphGroup[] = [...groupLabels].map(([id, label]) => {
    const n = g.node(id);
    return { id, label, group: parent(id), x: n.x, y: n.y, width: n.width, height: n.height };
  });
  const laid: GraphEdge[] = edges.map((e, i) => {
    const d = g.edge({ v: e.from, w: e.to, name: `e${i}` });
    const labelBox = e.label && typeof d.x === "number"
      ? { x: d.x, y: d.y, width: d.width, height: d.height }
      : undefined;
    return { ...e, points: d.points ?? [], labelBox };
  });
  const size = g.graph();
  const [width, height] = [size.width, size.height].map((v) =>
    Math.ceil(Number.isFinite(v) ? v! : MARGIN * 2)
  );
  return { nodes, groups, edges: laid, width, height };
}

const path = (points: Array<{ x: number; y: number }>) =>
  points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");

/** The state graph as an SVG diagram (server-rendered, no script), with a text alternative. */
export function StateGraph(props: { definition: { start?: string; states: Obj[] } }) {
  const { nodes, groups, edges, width, height } = layout(props.definition);
  const description = edges.map((e) => `${e.from} to ${e.to}${e.label ? ` (${e.label})` : ""}`).join("; ");
  // Outer groups first, so inner groups and states are drawn over them.
  const depth = (g: GraphGroup): number => g.group ? 1 + depth(groups.find((o) => o.id === g.group)!) : 0;
  const ordered = [...groups].sort((a, b) => depth(a) - depth(b));
  const ancestors = (id?: string): string[] =>
    id ? [id, ...ancestors(groups.find((g) => g.id === id)?.group)] : [];
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
        {ordered.map((g) => (
          <g class="graph-group" data-group={g.id}>
            <rect
              x={g.x - g.width / 2}
              y={g.y - g.height / 2}
              width={g.width}
              height={g.height}
              rx="8"
              fill="#f6f8fa"
              stroke="#8c959f"
              stroke-dasharray="4 3"
            />
            <text x={g.x - g.width / 2 + 8} y={g.y + g.height / 2 - 6} font-size="11" fill="#57606a">
              {g.label}
            </text>
          </g>
        ))}
        {edges.map((e) => (
          <g class="graph-edge" data-from={e.from} data-to={e.to}>
            <path
              d={path(e.points)}
              fill="none"
              stroke="#57606a"
              stroke-width="1.5"
              stroke-dasharray={e.nested ? "5 3" : undefined}
              marker-end="url(#arrow)"
            />
            {e.labelBox
              ? (
                <text
                  class="graph-label"
                  x={e.labelBox.x}
                  y={e.labelBox.y + 4}
                  text-anchor="middle"
                  font-size="11"
                  fill="#7a4d00"
                  paint-order="stroke"
                  stroke="#ffffff"
                  stroke-width="3"
                >
                  {e.label}
                </text>
              )
              : null}
          </g>
        ))}
        {nodes.map((n) => (
          <g class="graph-state" data-state={n.id} data-groups={ancestors(n.group).join(" ")}>
            <rect
              x={n.x - n.width / 2}
              y={n.y - n.height / 2}
              width={n.width}
              height={n.height}
              rx="6"
              fill="#ffffff"
              stroke="#0a58ca"
            />
            <text x={n.x} y={n.y - 4} text-anchor="middle" font-size="13" font-weight="600">{n.id}</text>
            <text x={n.x} y={n.y + 12} text-anchor="middle" font-size="11" fill="#57606a">{n.type}</text>
          </g>
        ))}
      </svg>
    </div>
  );
}
