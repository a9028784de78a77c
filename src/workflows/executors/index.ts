import type { State, StateType } from "../definition/schema.ts";
import { foreach } from "./foreach.ts";
import { humanApproval } from "./human_approval.ts";
import { inject } from "./inject.ts";
import { parallel } from "./parallel.ts";
import { sandboxStep } from "./sandbox.ts";
import { switchStep } from "./switch.ts";
import { timer } from "./timer.ts";
import { transform } from "./transform.ts";
import type { Executor } from "./types.ts";
import { unavailable } from "./unavailable.ts";

/**
 * Step type → executor. `try` has no executor: the engine runs its blocks as child chains itself.
 * Replace `agent` here when its executor exists.
 */
export const EXECUTORS: Record<Exclude<StateType, "try">, Executor<any>> = {
  transform,
  inject,
  switch: switchStep,
  parallel,
  foreach,
  timer,
  human_approval: humanApproval,
  agent: unavailable,
  sandbox: sandboxStep,
};

/** The executor for a state. */
export function executorFor(state: State): Executor<any> | undefined {
  return state.type === "try" ? undefined : EXECUTORS[state.type];
}
