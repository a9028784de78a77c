import { didYouMean } from "../../lib/did_you_mean.ts";
import { stepType } from "../steps/registry.ts";
import { valuesAt } from "../steps/paths.ts";
import { toPointer } from "./source.ts";

/**
 * The validator's graph pass over a definition's states (after alias normalisation, before or
 * despite schema errors, so it reads values defensively): duplicate ids, transitions to states that
 * are not in their block, states nothing reaches, and cycles with no way out. Where a type keeps its
 * transitions and nested blocks comes from the step-type registry.
 */

type Obj = Record<string, unknown>;

/** A finding with a pointer into the normalised definition. */
export interface GraphFinding {
  code: string;
  path: string;
  message: string;
  hint: string;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The outgoing transitions of a state (`next` and its type's own), with their pointers. */
export function transitions(s: Obj, p: string): Array<{ target: string; path: string }> {
  const fields = [["next"], ...(stepType(String(s.type))?.targets ?? [])];
  return fields.flatMap((f) => valuesAt(s, f, p))
    .filter((t): t is { value: string; path: string } => typeof t.value === "string")
    .map((t) => ({ target: t.value, path: t.path }));
}

/** The nested blocks of a state, with their pointers. */
export function blocks(s: Obj, p: string): Array<{ block: Obj; path: string }> {
  const fields = stepType(String(s.type))?.blocks ?? [];
  return fields.flatMap((f) => valuesAt(s, f, p))
    .filter((b): b is { value: Obj; path: string } => isObj(b.value))
    .map((b) => ({ block: b.value, path: b.path }));
}

/** True when a state can end its block or the run (rather than always moving to another state). */
function canExit(s: Obj): boolean {
  if (s.end === true) return true;
  const exit = stepType(String(s.type))?.canExit;
  return exit ? exit(s) : s.next === undefined;
}

class Graph {
  readonly errors: GraphFinding[] = [];
  readonly warnings: GraphFinding[] = [];
  /** Every state id seen so far, with its pointer (ids are unique across nested blocks). */
  readonly ids = new Map<string, string>();
  /** Every state id anywhere, collected first so a target in a later block is recognised. */
  readonly allIds = new Set<string>();
  readonly noted = new Set<string>();

  /** `written` maps a normalised pointer to what the user wrote (for messages that name another place). */
  constructor(readonly written: (pointer: string) => string) {}

  collect(states: unknown): void {
    if (!Array.isArray(states)) return;
    for (const s of states.filter(isObj)) {
      if (typeof s.id === "string" && typeof s.type === "string") this.allIds.add(s.id);
      for (const b of blocks(s, "")) this.collect(b.block.states);
    }
  }

  /** A list of states with its own transitions; `start` is checked against it. */
  block(states: unknown, p: string, start: unknown, startPath: string): void {
    if (!Array.isArray(states)) return; // the schema reports it
    const local = new Map<string, Obj>();
    states.forEach((s, i) => {
      if (!isObj(s)) return;
      this.state(s, `${p}/${i}`);
      if (typeof s.id === "string") local.set(s.id, s);
    });
    const target = (t: string, path: string) => {
      if (local.has(t)) return;
      const near = didYouMean(t, [...local.keys()]);
      this.errors.push({
        code: "unknown_target",
        path,
        message: `\`${t}\` is not a state in this block`,
        hint: this.allIds.has(t)
          ? `\`${t}\` is in another block: transitions stay inside their own block`
          : near
          ? `did you mean \`${near}\`?`
          : `states here: ${[...local.keys()].join(", ")}`,
      });
    };
    if (typeof start === "string") target(start, startPath);
    states.forEach((s, i) => {
      if (isObj(s)) { for (const t of transitions(s, `${p}/${i}`)) target(t.target, t.path); }
    });
    this.reach(states, p, typeof start === "string" && local.has(start) ? start : undefined, local);
  }

  state(s: Obj, p: string): void {
    if (typeof s.id === "string") {
      const prev = this.ids.get(s.id);
      if (prev !== undefined) {
        this.errors.push({
          code: "duplicate_id",
          path: `${p}/id`,
          message: `state id \`${s.id}\` is already used at ${this.written(prev)}`,
          hint: "state ids are unique in the whole workflow, nested blocks included",
        });
      } else this.ids.set(s.id, p);
    }
    for (const n of stepType(String(s.type))?.notes?.(s) ?? []) {
      if (this.noted.has(n.code)) continue;
      this.noted.add(n.code);
      this.warnings.push({
        code: n.code,
        path: p + toPointer(n.at ?? []),
        message: n.message,
        hint: n.hint ?? "",
      });
    }
    for (const b of blocks(s, p)) {
      this.block(b.block.states, `${b.path}/states`, b.block.start, `${b.path}/start`);
    }
  }

  /** Warnings: states nothing leads to, and cycles with no way out. */
  reach(states: unknown[], p: string, start: string | undefined, local: Map<string, Obj>): void {
    const list = states.filter(isObj).filter((s) => typeof s.id === "string");
    if (list.length === 0) return;
    const edges = new Map<string, string[]>();
    for (const s of list) {
      edges.set(s.id as string, transitions(s, "").map((t) => t.target).filter((t) => local.has(t)));
    }
    const first = start ?? (list[0].id as string);
    const seen = new Set<string>([first]);
    const queue = [first];
    while (queue.length) {
      for (const n of edges.get(queue.shift()!) ?? []) if (!seen.has(n)) seen.add(n), queue.push(n);
    }
    states.forEach((s, i) => {
      if (isObj(s) && typeof s.id === "string" && !seen.has(s.id)) {
        this.warnings.push({
          code: "unreachable_state",
          path: `${p}/${i}`,
          message: `state \`${s.id}\` is never reached from \`${first}\``,
          hint: "point a `next` (or a switch condition) at it, or remove it",
        });
      }
    });
    // A reachable group of states that only lead to each other, none of which can end, loops forever.
    for (const id of seen) {
      const group = new Set<string>(edges.get(id));
      const q = [...group];
      while (q.length) {
        for (const n of edges.get(q.shift()!) ?? []) if (!group.has(n)) group.add(n), q.push(n);
      }
      if (!group.has(id) || [...group].some((g) => canExit(local.get(g)!))) continue;
      const idx = states.findIndex((s) => isObj(s) && s.id === id);
      this.warnings.push({
        code: "cycle_without_exit",
        path: `${p}/${idx}`,
        message: `from \`${id}\` the states ${
          [...group].map((g) => `\`${g}\``).join(", ")
        } loop with no way out`,
        hint:
          "give one of them an exit: a switch condition or defaultNext leading out, or a state without `next`",
      });
      break;
    }
  }
}

/** The graph findings of a (normalised) definition's states. */
export function checkGraph(
  def: Obj,
  written: (pointer: string) => string = (p) => p,
): { errors: GraphFinding[]; warnings: GraphFinding[] } {
  const g = new Graph(written);
  g.collect(def.states);
  g.block(def.states, "/states", def.start, "/start");
  return { errors: g.errors, warnings: g.warnings };
}

/** Every state type a definition uses, nested blocks included (e.g. to see whether it needs sandboxes). */
export function stateTypes(def: { states: unknown }): Set<string> {
  const types = new Set<string>();
  const visit = (states: unknown) => {
    if (!Array.isArray(states)) return;
    for (const s of states.filter(isObj)) {
      types.add(String(s.type));
      for (const { block } of blocks(s, "")) visit(block.states);
    }
  };
  visit(def.states);
  return types;
}
