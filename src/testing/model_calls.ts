/** Model calls as cassettes hold them: AI SDK calls ↔ normalised requests and responses, and doubled models. */

import type { ResolvedModel } from "../agents/providers.ts";
import type { ModelRequest, ModelResponse } from "./cassette.ts";

/** The AI SDK's language model interface (v4) as the station's providers implement it. */
export type LanguageModel = Extract<ResolvedModel["model"], { specificationVersion: "v4" }>;
/** What the agent loop's `generateText` hands a model. */
export type CallOptions = Parameters<LanguageModel["doGenerate"]>[0];
/** What a model answers. */
export type GenerateResult = Awaited<ReturnType<LanguageModel["doGenerate"]>>;

const SETTINGS = [
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
  "reasoning",
] as const;

/** Keys that carry transport or provider details, not what the model is asked. */
const DROPPED = new Set(["providerOptions", "providerMetadata", "abortSignal", "headers"]);

/** A copy of a JSON-like value without provider details and undefined members. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v).filter(([k, x]) => x !== undefined && !DROPPED.has(k)).map(([k, x]) => [k, plain(x)]),
    );
  }
  return v;
}

/** The request a model call makes, normalised for a cassette. */
export function modelRequest(model: string, o: CallOptions): ModelRequest {
  const settings: Record<string, unknown> = {};
  for (const k of SETTINGS) if (o[k] !== undefined) settings[k] = o[k];
  return {
    model,
    prompt: plain(o.prompt) as unknown[],
    tools: (o.tools ?? []).map((t) =>
      t.type === "function"
        ? {
          name: t.name,
          description: t.description ?? "",
          input_schema: plain(t.inputSchema) as Record<string, unknown>,
        }
        : { name: t.name, description: `provider tool ${t.id}`, input_schema: {} }
    ),
    ...(o.toolChoice ? { tool_choice: plain(o.toolChoice) } : {}),
    ...(o.responseFormat && o.responseFormat.type !== "text"
      ? { response_format: plain(o.responseFormat) }
      : {}),
    settings,
  };
}

/** A model's answer, normalised for a cassette. */
export function modelResponse(r: GenerateResult): ModelResponse {
  const text = r.content.flatMap((c) => c.type === "text" ? [c.text] : []).join("");
  return {
    text,
    tool_calls: r.content.flatMap((c) =>
      c.type === "tool-call" ? [{ id: c.toolCallId, name: c.toolName, input: c.input }] : []
    ),
    finish_reason: r.finishReason.unified,
    usage: {
      input_tokens: r.usage.inputTokens.total ?? 0,
      output_tokens: r.usage.outputTokens.total ?? 0,
      cached_tokens: r.usage.inputTokens.cacheRead ?? 0,
    },
  };
}

/** A recorded (or scripted) answer as the model interface returns it. */
export function generateResult(r: ModelResponse): GenerateResult {
  return {
    content: [
      ...(r.text ? [{ type: "text" as const, text: r.text }] : []),
      ...r.tool_calls.map((c) => ({
        type: "tool-call" as const,
        toolCallId: c.id,
        toolName: c.name,
        input: c.input,
      })),
    ],
    finishReason: { unified: r.finish_reason, raw: r.finish_reason },
    usage: {
      inputTokens: {
        total: r.usage.input_tokens,
        noCache: r.usage.input_tokens - r.usage.cached_tokens,
        cacheRead: r.usage.cached_tokens,
        cacheWrite: undefined,
      },
      outputTokens: { total: r.usage.output_tokens, text: r.usage.output_tokens, reasoning: undefined },
    },
    warnings: [],
  };
}

/** A model whose calls `generate` answers (replay, script, recording): the loop calls only doGenerate. */
export function doubledModel(
  id: string,
  generate: (o: CallOptions) => Promise<GenerateResult>,
): ResolvedModel {
  const slash = id.indexOf("/");
  const model: LanguageModel = {
    specificationVersion: "v4",
    provider: slash < 0 ? "stn-test" : id.slice(0, slash),
    modelId: slash < 0 ? id : id.slice(slash + 1),
    supportedUrls: {},
    doGenerate: generate,
    doStream: () => Promise.reject(new Error("test doubles answer generate calls only")),
  };
  return { id, model };
}
