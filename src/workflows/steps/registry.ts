import { z } from "zod";
import { agent } from "./agent.ts";
import { awaitType } from "./await.ts";
import { blockStates, coded, commonRules, stateId } from "./fields.ts";
import { foreach } from "./foreach.ts";
import { humanApproval } from "./human_approval.ts";
import { inject } from "./inject.ts";
import { parallel } from "./parallel.ts";
import { sandbox } from "./sandbox.ts";
import { switchType } from "./switch.ts";
import { timer } from "./timer.ts";
import { transform } from "./transform.ts";
import { tryType } from "./try.ts";
import type { Executor, SchemaKit, StateRegistry, StepType } from "./types.ts";

/**
 * The step types (docs/design/workflows-dsl.md#step-types), the only list of them: the definition schema, the
 * validator's graph pass and the engine's executor lookup all derive from it. A new type is one
 * module in this folder plus one line here.
 */
const BUILT_IN = [
  agent,
  transform,
  inject,
  switchType,
  parallel,
  foreach,
  humanApproval,
  timer,
  tryType,
  awaitType,
  sandbox,
] as const;

/** The union of the built-in types' states (what StateRegistry holds). */
type BuiltInState = typeof BUILT_IN[number] extends infer T ? T extends StepType<infer S> ? S : never : never;

/** Any built-in state, discriminated by `type` (the union types.ts declares). */
export type State = StateRegistry["state"];

declare module "./types.ts" {
  /** The registered states' union, for the types of blocks (types.ts cannot import this list). */
  interface StateRegistry {
    state: BuiltInState;
  }
}

const types = new Map<string, StepType>(BUILT_IN.map((t) => [t.type, t as StepType]));

/** The state schemas built for the types registered now (rebuilt when one is added). */
let built: (SchemaKit & { state: z.ZodType<State> }) | undefined;

/**
 * Adds a step type after the built-in ones (a plugin, or a test's own type); from then on definitions
 * may use it and the engine runs it.
 */
export function registerStepType(type: StepType): void {
  if (types.has(type.type)) throw new Error(`step type ${type.type} is already registered`);
  types.set(type.type, type);
  built = undefined;
}

/** The registered step type of that name. */
export function stepType(name: string): StepType | undefined {
  return types.get(name);
}

/** The names of the registered step types, built-in ones first in the spec's order. */
export function stepTypeNames(): string[] {
  return [...types.keys()];
}

/** The executor for a state. */
// deno-lint-ignore no-explicit-any -- the executor of `state.type` takes that type's state, which the caller holds
export function executorFor(state: { type: string }): Executor<any> | undefined {
  return types.get(state.type)?.executor;
}

const missingBlock = coded((i) =>
  i.input === undefined
    ? {
      code: "missing_field",
      message: `\`${String(i.path?.at(-1))}\` block is required`,
      hint: "a block is `{start?, states: [...]}`",
    }
    : undefined
);

/** A state schema per registered type, joined on `type`; nested blocks hold any registered state. */
export function stateSchemas(): SchemaKit & { state: z.ZodType<State> } {
  if (built) return built;
  // Lazy: the union is what a nested block holds, and it is built from the types' schemas below.
  const states = z.array(z.lazy(() => state), { error: blockStates }).min(1, { error: blockStates });
  const block = z.strictObject({ start: stateId().optional(), states }, { error: missingBlock }).describe(
    "the {key} block",
  );
  const options = [...types.values()].map((t) =>
    t.schema({ states, block }).check(commonRules).describe(
      `${/^[aeiou]/.test(t.type) ? "an" : "a"} ${t.type} state`,
    )
  );
  // Typed as the built-in states: a type registered later is checked by its own schema all the same.
  const union = z.discriminatedUnion("type", options as [z.ZodObject, ...z.ZodObject[]]);
  const state = union as unknown as z.ZodType<State>;
  return built = { states, block, state };
}
