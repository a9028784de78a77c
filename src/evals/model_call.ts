/**
 * One plain model call for the evals' own prompts (the judge, `stn eval generate`): the station's provider
 * registry, its usage counted in the metrics like an agent's call, no tools; a provider's failure becomes
 * `failure` with its message.
 */

import { generateText } from "ai";
import type { EvalJudgeCall } from "../contract/evals.ts";
import type { ErrorCode } from "../errors.ts";
import { errorMessage, StationError } from "../errors.ts";
import type { Models } from "../agents/providers.ts";
import { recordModelCall } from "../telemetry/agents.ts";
import { callCost } from "../telemetry/cost.ts";
import type { ModelPrice } from "../telemetry/model_price.ts";

/** What to ask, and the code a failed call is reported with. */
export interface Ask {
  model?: string;
  system: string;
  prompt: string;
  failure: ErrorCode;
  signal?: AbortSignal;
  /** Who asks, as `stn_agent_cost_usd_total` labels it (`eval:judge`, `eval:generate`). */
  caller: string;
  /** `ai.prices`: what the call cost is counted at (docs/agents.md#cost). */
  prices?: Record<string, ModelPrice>;
}

/** Asks the model once: its answer text, recorded with the model and the usage. */
export async function askModel(models: Models, ask: Ask): Promise<EvalJudgeCall> {
  const resolved = models.resolve(ask.model);
  try {
    const r = await generateText({
      model: resolved.model,
      system: ask.system,
      prompt: ask.prompt,
      abortSignal: ask.signal,
      maxRetries: 1,
    });
    const input = r.usage.inputTokens ?? 0;
    const output = r.usage.outputTokens ?? 0;
    // Counted like the agents' calls (stn_agent_tokens_total by model): the judge's tokens are spent too.
    const counted = {
      input_tokens: input,
      output_tokens: output,
      cached_tokens: r.usage.inputTokenDetails?.cacheReadTokens ?? 0,
    };
    const cost_usd = callCost({ model: resolved.id, ...counted }, ask.prices);
    recordModelCall(
      undefined,
      { model: resolved.id, agent: ask.caller },
      { ...counted, cost_usd },
      r.finishReason,
    );
    return {
      model: resolved.id,
      input_tokens: input,
      output_tokens: output,
      total_tokens: r.usage.totalTokens ?? input + output,
      answer: r.text,
    };
  } catch (err) {
    throw new StationError(ask.failure, `${resolved.id}: ${errorMessage(err)}`, {
      hint: "check the model's provider settings (ai.*) and its key; `stn doctor` checks them",
      cause: err,
    });
  }
}

/** The JSON value in a model's answer: the whole text, or inside a ``` fence, or its outermost {…} / […]. */
export function jsonInAnswer(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  const candidates = [text, fenced].filter((t): t is string => t !== undefined);
  for (const [open, close] of [["{", "}"], ["[", "]"]]) {
    const a = text.indexOf(open), b = text.lastIndexOf(close);
    if (a >= 0 && b > a) candidates.push(text.slice(a, b + 1));
  }
  for (const c of candidates) {
    try {
      return JSON.parse(c.trim());
    } catch { /* the next form */ }
  }
  return undefined;
}
