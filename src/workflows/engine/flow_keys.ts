/** The keys of flow control (concurrency, singleton, rate limit, debounce), evaluated over a run's input. */

import { keyValue } from "../definition/flow_control.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";
import { RATE_KEY_PREFIX } from "../../db/concurrency_keys.ts";

/** The prefix of a rate-limit key (workflow ids have no `:`, so it never names a concurrency key). */
export const RATE_KEY = RATE_KEY_PREFIX;

/** A template key over a run's input, per workflow: `<id><sep><value>`, or `<id>` without a template. */
export async function keyOf(
  def: WorkflowDefinition,
  template: string | undefined,
  input: Record<string, unknown>,
  sep = "/",
): Promise<string> {
  return template === undefined ? def.id : `${def.id}${sep}${await keyValue(template, input)}`;
}
