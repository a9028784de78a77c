/**
 * What model calls cost (docs/agents.md#cost): the price table (`ai.prices` over the built-in defaults),
 * finding a model's price, and the arithmetic that turns a call's token counts into US dollars.
 */

import type { ModelPrice } from "./model_price.ts";

const p = (input: number, output: number, cached?: number): ModelPrice => ({
  input_per_million: input,
  output_per_million: output,
  ...(cached === undefined ? {} : { cached_input_per_million: cached }),
});

/**
 * The providers' list prices of common models (standard tier, prompts under any long-context surcharge), as
 * published when this table was written. `ai.prices` overrides or adds entries; a dated id
 * (`openai/gpt-4o-2024-08-06`) takes its family's price (see priceOf).
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  "openai/gpt-4o": p(2.5, 10, 1.25),
  "openai/gpt-4o-mini": p(0.15, 0.6, 0.075),
  "openai/gpt-4.1": p(2, 8, 0.5),
  "openai/gpt-4.1-mini": p(0.4, 1.6, 0.1),
  "openai/gpt-4.1-nano": p(0.1, 0.4, 0.025),
  "openai/gpt-5": p(1.25, 10, 0.125),
  "openai/gpt-5-mini": p(0.25, 2, 0.025),
  "openai/gpt-5-nano": p(0.05, 0.4, 0.005),
  "openai/o3": p(2, 8, 0.5),
  "openai/o4-mini": p(1.1, 4.4, 0.275),
  "anthropic/claude-opus-4-1": p(15, 75, 1.5),
  "anthropic/claude-opus-4": p(15, 75, 1.5),
  "anthropic/claude-sonnet-4-5": p(3, 15, 0.3),
  "anthropic/claude-sonnet-4": p(3, 15, 0.3),
  "anthropic/claude-3-7-sonnet": p(3, 15, 0.3),
  "anthropic/claude-haiku-4-5": p(1, 5, 0.1),
  "anthropic/claude-3-5-haiku": p(0.8, 4, 0.08),
  "gemini/gemini-2.5-pro": p(1.25, 10),
  "gemini/gemini-2.5-flash": p(0.3, 2.5),
  "gemini/gemini-2.5-flash-lite": p(0.1, 0.4),
  "gemini/gemini-2.0-flash": p(0.1, 0.4),
};

/**
 * The price of `model` (`provider/name`): its entry in `prices` (config's, over the defaults), else the
 * longest entry it starts with followed by `-` (a dated or suffixed id of a listed family), else undefined —
 * an unknown price, whose runs show no cost rather than a wrong one.
 */
export function priceOf(
  model: string,
  prices: Readonly<Record<string, ModelPrice>> = {},
): ModelPrice | undefined {
  const table = { ...DEFAULT_PRICES, ...prices };
  if (table[model]) return table[model];
  const family =
    Object.keys(table).filter((k) => model.startsWith(`${k}-`)).sort((a, b) => b.length - a.length)[0];
  return family ? table[family] : undefined;
}

/** Token counts of one model call (cached tokens are a part of the input ones). */
export interface PricedUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
}

/** What a call with this usage costs at this price, in US dollars. */
export function costOf(usage: PricedUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cached_tokens, usage.input_tokens);
  const cachedRate = price.cached_input_per_million ?? price.input_per_million;
  return ((usage.input_tokens - cached) * price.input_per_million + cached * cachedRate +
    usage.output_tokens * price.output_per_million) / 1_000_000;
}

/** The budget that holds of an agent's `max_cost` and a caller's (an eval's): the lower one, or none. */
export function lowestBudget(...budgets: (number | undefined)[]): number | undefined {
  const set = budgets.filter((b): b is number => b !== undefined);
  return set.length ? Math.min(...set) : undefined;
}

/** What one recorded model call cost at `prices` (a judge's, a generator's); null when its model has no price. */
export function callCost(
  call: { model: string; input_tokens: number; output_tokens: number },
  prices: Readonly<Record<string, ModelPrice>> = {},
): number | null {
  const price = priceOf(call.model, prices);
  return price ? costOf({ ...call, cached_tokens: 0 }, price) : null;
}

/** The sum of costs: unknown (null) when any of them is, 0 for none. */
export function sumCosts(costs: (number | null)[]): number | null {
  return costs.some((c) => c === null) ? null : (costs as number[]).reduce((a, b) => a + b, 0);
}

/** A cost as people read it: `$0.000123`, `$1.25`; `-` when unknown (no price for the model). */
export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return "-";
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(6).replace(/\.?0+$/, "") || "0"}`;
}
