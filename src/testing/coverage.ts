/**
 * Workflow coverage: per workflow, which states the suite's runs visited and which branches they took
 * (switch cases and default, an approval's onReject/onTimeout, an await's onTimeout, a try's catch).
 */

import type { WorkflowCoverage } from "../contract/tests.ts";
import { blocks } from "../workflows/definition/graph.ts";
import type { WorkflowTrace } from "./run_case.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every state of a definition (nested blocks included), in order, with the branches each one has. */
export function shape(def: { states?: unknown }): { states: string[]; branches: string[] } {
  const states: string[] = [];
  const branches: string[] = [];
  const visit = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const s of list.filter(isObj)) {
      const id = String(s.id);
      states.push(id);
      if (s.type === "switch") {
        (Array.isArray(s.conditions) ? s.conditions : []).forEach((_, i) => branches.push(`${id}→case ${i}`));
        if (s.defaultNext !== undefined) branches.push(`${id}→default`);
      }
      if (s.type === "human_approval") {
        branches.push(`${id}→approved`);
        if (s.onReject !== undefined) branches.push(`${id}→onReject`);
        if (s.onTimeout !== undefined) branches.push(`${id}→onTimeout`);
      }
      if (s.type === "await" && s.onTimeout !== undefined) branches.push(`${id}→onTimeout`);
      if (s.type === "try" && isObj(s.catch)) branches.push(`${id}→catch`);
      for (const b of blocks(s, "")) visit(b.block.states);
    }
  };
  visit(def.states);
  return { states, branches };
}

/** The states a try's catch block holds (a visit to any of them is the catch branch taken). */
function catchStates(def: { states?: unknown }): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const visit = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const s of list.filter(isObj)) {
      if (s.type === "try" && isObj(s.catch) && Array.isArray(s.catch.states)) {
        out.set(String(s.id), s.catch.states.filter(isObj).map((c) => String(c.id)));
      }
      for (const b of blocks(s, "")) visit(b.block.states);
    }
  };
  visit(def.states);
  return out;
}

/** The branches one run took, as `state→label`. */
export function branchesTaken(trace: WorkflowTrace, def: { states?: unknown }): Set<string> {
  const taken = new Set<string>();
  const byPath = new Map(trace.steps.map((s) => [s.path, s.step_id]));
  const idOf = (path: string | null) => path === null ? undefined : byPath.get(path) ?? path.split("/").pop();
  for (const s of trace.steps) {
    const out = s.output as { matched?: unknown } | null;
    if (isObj(out) && "matched" in out && "next" in out) {
      taken.add(`${s.step_id}→${out.matched === "default" ? "default" : `case ${out.matched}`}`);
    }
  }
  for (const e of trace.events) {
    const id = idOf(e.step);
    if (!id) continue;
    if (e.type === "approval_decided") {
      taken.add(`${id}→${(e.data as { approved?: boolean })?.approved ? "approved" : "onReject"}`);
    }
    if (e.type === "approval_timed_out" || e.type === "wait_timed_out") taken.add(`${id}→onTimeout`);
  }
  const visited = new Set(trace.steps.map((s) => s.step_id));
  for (const [id, inner] of catchStates(def)) if (inner.some((s) => visited.has(s))) taken.add(`${id}→catch`);
  return taken;
}

/** Coverage of each workflow the suite ran: states visited and branches taken, with a percentage. */
export function coverage(
  traces: WorkflowTrace[],
  definitions: Map<string, { states?: unknown }>,
): WorkflowCoverage[] {
  return [...definitions].sort(([a], [b]) => a.localeCompare(b)).map(([workflow, def]) => {
    const { states, branches } = shape(def);
    const visited = new Set<string>();
    const taken = new Set<string>();
    for (const t of traces.filter((t) => t.workflow === workflow)) {
      for (const s of t.steps) visited.add(s.step_id);
      for (const b of branchesTaken(t, def)) taken.add(b);
    }
    const v = states.filter((s) => visited.has(s));
    const b = branches.filter((x) => taken.has(x));
    const total = states.length + branches.length;
    const percent = total === 0 ? 100 : Math.round(((v.length + b.length) / total) * 1000) / 10;
    return { workflow, states, visited: v, branches, taken: b, percent };
  });
}
