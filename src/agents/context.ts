/** Agent context management: the window a run may fill, the next request's token estimate, old tool outputs removed. */

import type { ModelMessage } from "ai";
import type { ContextSettings } from "../contract/agent_definition.ts";
import { StationError } from "../errors.ts";
import type { ToolCallRow } from "./run_rows.ts";

export type ContextPlan = Required<ContextSettings>;

/** The window of a model stn does not know: small enough for every current provider's models. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;

// Well-known windows by `provider/` + name prefix, most specific first (input tokens, from the providers' docs).
const KNOWN_WINDOWS: [string, number][] = [
  ["openai/gpt-5", 400_000],
  ["openai/gpt-4.1", 1_047_576],
  ["openai/gpt-4o", 128_000],
  ["openai/gpt-4-turbo", 128_000],
  ["openai/gpt-4", 8_192],
  ["openai/gpt-3.5-turbo", 16_385],
  ["openai/o1", 200_000],
  ["openai/o3", 200_000],
  ["openai/o4", 200_000],
  ["anthropic/claude-", 200_000],
  ["gemini/gemini-1.5-pro", 2_097_152],
  ["gemini/gemini-", 1_048_576],
];

/** The known context window of a model id (`provider/name`), or DEFAULT_CONTEXT_TOKENS. */
export function modelContextWindow(modelId: string): number {
  return KNOWN_WINDOWS.find(([prefix]) => modelId.startsWith(prefix))?.[1] ?? DEFAULT_CONTEXT_TOKENS;
}

/** The settings a run uses: the agent's, over config's, over the model's window and the defaults. */
export function contextPlan(
  agent: ContextSettings | undefined,
  global: ContextSettings | undefined,
  modelId: string,
): ContextPlan {
  return {
    max_tokens: agent?.max_tokens ?? global?.max_tokens ?? modelContextWindow(modelId),
    threshold: agent?.threshold ?? global?.threshold ?? 0.8,
    strategy: agent?.strategy ?? global?.strategy ?? "drop_tool_outputs",
    keep_turns: agent?.keep_turns ?? global?.keep_turns ?? 2,
  };
}

/** Tokens of a text by the documented estimate: its characters (UTF-16 code units) divided by 4, rounded up. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The line that replaces a removed tool output: the model sees what was there and why it went. */
export function removedMarker(name: string, turn: number, bytes: number): string {
  return `[tool output of ${name} at turn ${turn} removed to fit the context window: ${bytes} bytes]`;
}

/** A tool output removed from the context, as recorded on its call. */
export interface Removal {
  call_id: string;
  name: string;
  /** The turn whose tool call produced it. */
  turn: number;
  bytes: number;
}

/** What `fit` decided before a new model call. */
export interface Fit {
  estimated_tokens: number;
  /** The estimate after the removals (equal when none). */
  fitted_tokens: number;
  removed: Removal[];
}

type ToolPart = {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  output: { type: string; value: unknown };
};

const encoder = new TextEncoder();
const OVERFLOW =
  /context_length_exceeded|prompt is too long|maximum context length|context window|too many tokens|exceeds the maximum number of tokens/i;

/**
 * One run's context window (docs/agents.md#context-window). The loop calls `before` ahead of every turn, replayed
 * or new, with the conversation so far: removals recorded at that turn (a resume) are applied again; for a new
 * turn the next request's tokens are estimated — the previous turn's reported input tokens plus chars/4 of what
 * was added since, or chars/4 of the whole request, whichever is larger — and when that passes threshold ×
 * max_tokens the oldest tool outputs outside the latest `keep_turns` turns are replaced by a marker until it
 * does not. Decisions depend only on stored turns and calls, so a resume rebuilds the same history.
 */
export class RunContext {
  readonly plan: ContextPlan;
  #fixedChars: number;
  #recorded: Map<number, Removal[]>;
  #turnOf = new Map<string, number>();
  #requestLength = 0;
  #lastEstimate = 0;

  /**
   * `plan` is the run's (its context settings absent on runs started before them: the model's defaults); `calls`
   * are the run's recorded tool calls, whose `removed_at_turn` a resume applies again.
   */
  constructor(
    plan: { system?: string; context?: ContextPlan },
    modelId: string,
    tools: { name: string; description: string; inputSchema: unknown }[],
    calls: Pick<ToolCallRow, "call_id" | "name" | "turn" | "output" | "removed_at_turn">[],
  ) {
    this.plan = plan.context ?? contextPlan(undefined, undefined, modelId);
    const fixed = { system: plan.system, tools: tools.map((t) => [t.name, t.description, t.inputSchema]) };
    this.#fixedChars = JSON.stringify(fixed).length;
    this.#recorded = new Map();
    for (const c of calls) {
      if (c.removed_at_turn === null) continue;
      const removal = {
        call_id: c.call_id,
        name: c.name,
        turn: c.turn,
        bytes: encoder.encode(c.output ?? "").length,
      };
      this.#recorded.set(c.removed_at_turn, [...(this.#recorded.get(c.removed_at_turn) ?? []), removal]);
    }
  }

  /**
   * Before turn `turn`: reapplies its recorded removals and, for a new turn (`previousInputTokens` given: the
   * last turn's reported input, 0 when none), fits the request; returns the new removals to record. Throws
   * `context_overflow` when even removing every eligible output leaves it over max_tokens.
   */
  before(turn: number, messages: ModelMessage[], previousInputTokens?: number): Fit | undefined {
    for (const part of toolParts(messages.slice(this.#requestLength))) {
      if (!this.#turnOf.has(part.toolCallId)) this.#turnOf.set(part.toolCallId, turn - 1);
    }
    const added = JSON.stringify(messages.slice(this.#requestLength)).length;
    this.#requestLength = messages.length;
    const recorded = this.#recorded.get(turn) ?? [];
    if (previousInputTokens === undefined) {
      for (const r of recorded) replaceOutput(messages, r);
      return undefined;
    }
    // Estimated before this turn's recorded removals (a resume) are applied again, as the first run did.
    const whole = estimateTokens(this.#fixedChars + JSON.stringify(messages).length);
    const reported = previousInputTokens > 0 ? previousInputTokens + estimateTokens(added) : 0;
    const estimated = Math.max(whole, reported);
    let fitted = estimated;
    const saving = (r: Removal) => {
      const before = JSON.stringify(messages).length;
      replaceOutput(messages, r);
      fitted -= estimateTokens(before - JSON.stringify(messages).length);
    };
    recorded.forEach(saving);
    this.#lastEstimate = fitted;
    if (this.plan.strategy === "none") {
      return { estimated_tokens: estimated, fitted_tokens: fitted, removed: [] };
    }
    const target = Math.floor(this.plan.threshold * this.plan.max_tokens);
    const removed: Removal[] = [];
    for (const part of toolParts(messages)) {
      if (fitted <= target) break;
      const at = this.#turnOf.get(part.toolCallId) ?? turn - 1;
      if (at > turn - 1 - this.plan.keep_turns || isRemoved(part)) continue;
      const text = typeof part.output.value === "string"
        ? part.output.value
        : JSON.stringify(part.output.value);
      const removal = {
        call_id: part.toolCallId,
        name: part.toolName,
        turn: at,
        bytes: encoder.encode(text).length,
      };
      saving(removal);
      removed.push(removal);
    }
    this.#lastEstimate = fitted;
    if (fitted > this.plan.max_tokens) {
      throw new StationError(
        "context_overflow",
        `the next request needs about ${fitted} tokens, over the context window of ${this.plan.max_tokens}` +
          (removed.length ? ` even with ${removed.length} older tool outputs removed` : ""),
        { hint: overflowHint },
      );
    }
    return { estimated_tokens: estimated, fitted_tokens: fitted, removed };
  }

  /** A provider's "context length exceeded" refusal as `context_overflow` naming the sizes; else undefined. */
  overflowOf(err: unknown): StationError | undefined {
    const e = err as { message?: string; responseBody?: string };
    const said = `${e?.message ?? ""} ${e?.responseBody ?? ""}`;
    if (!OVERFLOW.test(said)) return undefined;
    return new StationError(
      "context_overflow",
      `the model refused a request of about ${this.#lastEstimate} tokens (estimate; context.max_tokens ` +
        `${this.plan.max_tokens}, strategy ${this.plan.strategy}) as over its context window: ${
          e?.message ?? said
        }`,
      { hint: overflowHint },
    );
  }
}

const overflowHint =
  "set context.max_tokens in the agent's .prompt (or agents.context.max_tokens) to the model's window, keep " +
  "context.strategy: drop_tool_outputs, or have its tools return less (agents.max_tool_output)";

function toolParts(messages: ModelMessage[]): ToolPart[] {
  return messages.flatMap((m) =>
    m.role === "tool" ? (m.content as ToolPart[]).filter((p) => p.type === "tool-result") : []
  );
}

const isRemoved = (p: ToolPart) =>
  typeof p.output.value === "string" && p.output.value.startsWith("[tool output of ") &&
  p.output.value.includes(" removed to fit the context window: ");

function replaceOutput(messages: ModelMessage[], r: Removal): void {
  for (const part of toolParts(messages)) {
    if (part.toolCallId === r.call_id) {
      part.output = { type: "text", value: removedMarker(r.name, r.turn, r.bytes) };
    }
  }
}
