/** The keys of flow control (concurrency, singleton, rate limit, debounce), evaluated over a run's input. */

import { renderString } from "../expr.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";

/** The prefix of a rate-limit key (workflow ids have no `:`, so it never names a concurrency key). */
export const RATE_KEY = "rate:";

/** A template key over a run's input, per workflow: `<id><sep><value>`, or `<id>` without a template. */
export async function keyOf(
  def: WorkflowDefinition,
  template: string | undefined,
  input: Record<string, unknown>,
  sep = "/",
): Promise<string> {
  if (template === undefined) return def.id;
  const v = await renderString(template, { data: { ...input, input }, bindings: { input } });
  return `${def.id}${sep}${typeof v === "string" ? v : JSON.stringify(v ?? null)}`;
}
