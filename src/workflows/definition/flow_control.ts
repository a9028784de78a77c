/**
 * The flow-control fields of a workflow (docs/workflows.md#flow-control): concurrency keys, priority, singleton,
 * rate limit and debounce.
 */

import { z } from "zod";
import { renderString } from "../expr.ts";
import { Duration, Priority, RateLimit, templates } from "../steps/fields.ts";

/**
 * One concurrency limit: at most `limit` runs of the workflow hold the key at once; `key` is a `${…}` template
 * over the input (`${input.customer}`), one key for the whole workflow without it.
 */
export const ConcurrencyLimit = z.strictObject({
  key: z.string().min(1).check(templates).optional(),
  limit: z.int().min(1).max(100_000),
}).describe("a concurrency limit");
export type ConcurrencyLimit = z.infer<typeof ConcurrencyLimit>;

/** The limits a run must all fit before it starts; up to 4 (each is a key the run holds while it runs). */
export const Concurrency = z.array(ConcurrencyLimit).min(1).max(4).describe("concurrency");

/** How soon a run is admitted when slots are scarce: 0 (last) to 9 (first); default 5 (shared with steps). */
export { Priority };

/** A concurrency or singleton key template's value over a run's input (`input.x` or `x`), as key text. */
export async function keyValue(template: string, input: Record<string, unknown>): Promise<string> {
  const v = await renderString(template, { data: { ...input, input }, bindings: { input } });
  return typeof v === "string" ? v : JSON.stringify(v ?? null);
}

/** The priority of a run when neither the start nor the workflow gives one. */
export const DEFAULT_PRIORITY = 5;

/**
 * At most one active run per key (a `${…}` template over the input; the whole workflow without it): a start
 * while one is active is skipped (`skip`: the active run is the answer) or cancels it (`cancel_previous`).
 */
export const Singleton = z.strictObject({
  key: z.string().min(1).check(templates).optional(),
  mode: z.enum(["skip", "cancel_previous"]).default("skip"),
}).describe("singleton");

/**
 * A workflow's `rate_limit` is a step's (`steps/fields.ts`): at most `limit` runs admitted (started) per `period`
 * per key (a `${…}` template over the input; the whole workflow without it); runs over it wait for the window.
 */
export { RateLimit };

/**
 * Trailing debounce of event-started runs: an event restarts its key's window (a `${…}` template over the
 * input; the whole workflow without it), and one run starts `period` after the last event, with its input.
 */
export const Debounce = z.strictObject({
  key: z.string().min(1).check(templates).optional(),
  period: Duration,
}).describe("debounce");
