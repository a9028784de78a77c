import type { Block, State } from "../definition/schema.ts";
import type { Scope } from "../steps/types.ts";
import { contextScope, evaluate } from "../expr.ts";
import type { RunTrigger } from "../trigger.ts";

/** The data-flow rules of docs/design/workflows-dsl.md#data-flow, as pure functions over a scope. */

/** The run context at start: input fields at the top level, plus `workflow` (with its trigger) and `steps`. */
export function initialContext(
  input: Record<string, unknown>,
  runId: string,
  workflowId: string,
  trigger?: RunTrigger,
): Scope {
  return {
    ...structuredClone(input),
    workflow: { input, run_id: runId, workflow_id: workflowId, ...(trigger ? { trigger } : {}) },
    steps: {},
  };
}

/** Writes value at a dot path (`$.` prefix allowed), creating objects on the way. */
export function setPath(target: Scope, path: string, value: unknown): void {
  const parts = path.replace(/^\$\.?/, "").split(".").filter((p) => p !== "");
  if (parts.length === 0) return;
  let obj: Record<string, unknown> = target;
  for (const part of parts.slice(0, -1)) {
    const next = obj[part];
    if (next === null || typeof next !== "object" || Array.isArray(next)) obj[part] = {};
    obj = obj[part] as Record<string, unknown>;
  }
  obj[parts[parts.length - 1]] = value;
}

/** The scope after a step completed: `steps.<id>`, the output at `resultPath`, then the `output` mappings. */
export async function applyOutput(scope: Scope, state: State, output: unknown): Promise<Scope> {
  const next = structuredClone(scope);
  const steps = (next.steps ??= {}) as Record<string, unknown>;
  steps[state.id] = { output, status: "completed" };
  setPath(next, state.resultPath ?? state.id, output);
  for (const [key, expr] of Object.entries(state.output ?? {})) {
    const value = await evaluate(expr, output, contextScope(next).bindings);
    if (value !== undefined) next[key] = value;
  }
  return next;
}

/** The context after steps completed in order: `applyOutput` of each, from `start` (a fork, `stn workflow eval`). */
export async function replayContext(
  start: Scope,
  steps: { state: State; output: unknown }[],
): Promise<Scope> {
  let scope = start;
  for (const s of steps) scope = await applyOutput(scope, s.state, s.output);
  return scope;
}

/** The state a block starts at: `start` or its first state. */
export function blockStart(block: Block): State {
  return (block.start && block.states.find((s) => s.id === block.start)) || block.states[0];
}

/** Finds a state of a block by id. */
export function findState(block: Block, id: string): State | undefined {
  return block.states.find((s) => s.id === id);
}
