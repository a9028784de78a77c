/** The one AI SDK provider registry: a model id (`provider/name`) and the `ai` settings → a model. */

import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createProviderRegistry, type LanguageModel } from "ai";
import type { Config } from "../config/schema.ts";
import { StationError } from "../errors.ts";

// The AI SDK prints a warning per call for settings a model does not know (an unknown model name
// served by Ollama, say); the station's own log and the run record say what matters.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** The `ai` section of config.yaml. */
export type AiConfig = Omit<Config["ai"], "limits">;
type Provider = AiConfig["provider"];

/** A model resolved for one run: its `provider/name` id and the AI SDK model that calls it. */
export interface ResolvedModel {
  id: string;
  /** Never a bare string: one would go to the AI SDK's hosted gateway. */
  model: Exclude<LanguageModel, string>;
}

/**
 * Who an agent run is, as doubles see it. `key` names the run's place in the run tree it belongs to, the same
 * on every run of the same test (`agent:<name>` for a top-level run, `step:<path>#<visit>:<agent>` for a
 * workflow step's, `<parent key> > <call id>:<agent>` for a child agent's): a cassette finds a run's recording
 * by it, whatever order concurrent steps start in.
 */
export interface RunIdentity {
  id: string;
  agent: string;
  environment: string;
  /** `provider/name`. */
  model: string;
  key: string;
}

/** Resolves model references (`provider/name`, or a bare name of `ai.provider`) to AI SDK models. */
export interface Models {
  /**
   * The model of `ref` (the agent's `model`, else `ai.model`); a missing key or unknown provider throws first.
   * `run` is the run it is for, once the run exists (doubles answer by it; the providers ignore it).
   */
  resolve(ref?: string, run?: RunIdentity): ResolvedModel;
}

// Go-project spellings users' .prompt files carry (GenKit plugin names).
const ALIASES: Record<string, Provider> = { google: "gemini", googleai: "gemini", googlegenai: "gemini" };
const PROVIDERS: readonly Provider[] = ["openai", "anthropic", "gemini", "openai-compatible"];
const KEY_VARS: Record<Provider, string[]> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"],
  "openai-compatible": [],
};

/**
 * One AI SDK provider registry for the station's `ai` settings (docs/design/agents.md#the-loop): nothing else
 * knows provider names. Every model string goes through it — a bare string handed to the AI SDK would go to
 * its hosted gateway. `ai.base_url` and `ai.api_key` apply to `ai.provider`; the other providers read their
 * usual environment variables. With a base URL, `openai` speaks chat completions (not the Responses API), so
 * Ollama, vLLM and LM Studio work.
 */
export function createModels(ai: Omit<AiConfig, "prices">, env: Record<string, string | undefined>): Models {
  const keyOf = (p: Provider) =>
    (p === ai.provider ? ai.api_key : undefined) ?? KEY_VARS[p].map((v) => env[v]).find((v) => v);
  const baseOf = (p: Provider) => (p === ai.provider ? ai.base_url : undefined);
  const openaiBase = baseOf("openai");
  const registry = createProviderRegistry({
    openai: openaiBase
      ? createOpenAICompatible({
        name: "openai",
        baseURL: openaiBase,
        apiKey: keyOf("openai"),
        includeUsage: true,
      })
      : createOpenAI({ apiKey: keyOf("openai") ?? "" }),
    anthropic: createAnthropic({ apiKey: keyOf("anthropic") ?? "", baseURL: baseOf("anthropic") }),
    gemini: createGoogleGenerativeAI({ apiKey: keyOf("gemini") ?? "", baseURL: baseOf("gemini") }),
    "openai-compatible": createOpenAICompatible({
      name: "openai-compatible",
      baseURL: baseOf("openai-compatible") ?? "http://127.0.0.1:11434/v1",
      apiKey: keyOf("openai-compatible"),
      includeUsage: true,
    }),
  }, { separator: "/" });

  return {
    resolve(ref) {
      const { id, provider, written } = modelIdOf(ai, ref);
      if (provider === "openai-compatible" && !ai.base_url) {
        throw new StationError("config_invalid", `model ${written}: openai-compatible needs ai.base_url`, {
          hint:
            "set ai.provider: openai-compatible and ai.base_url (e.g. http://127.0.0.1:11434/v1 for Ollama)",
        });
      }
      if (KEY_VARS[provider].length > 0 && !keyOf(provider)) {
        throw new StationError("model_api_key_missing", `model ${written}: no API key for ${provider}`, {
          hint: `set ${KEY_VARS[provider].slice(0, 2).join(" or ")} in the station's environment` +
            (provider === ai.provider ? ", or ai.api_key in config.yaml" : ""),
        });
      }
      return { id, model: registry.languageModel(id as `openai/${string}`) };
    },
  };
}

/**
 * The `provider/name` id a model reference stands for (the agent's `model`, else `ai.model`; aliases and
 * a bare name of `ai.provider` resolved), without a key or a connection: what a run records as its model.
 */
export function modelIdOf(
  ai: Pick<AiConfig, "model" | "provider">,
  ref?: string,
): { id: string; provider: Provider; written: string } {
  const written = ref ?? ai.model;
  const slash = written.indexOf("/");
  const named = slash < 0 ? ai.provider : written.slice(0, slash);
  const name = slash < 0 ? written : written.slice(slash + 1);
  const provider = ALIASES[named] ?? named as Provider;
  if (!PROVIDERS.includes(provider) || !name) {
    throw new StationError(
      "model_provider_unknown",
      `model ${JSON.stringify(written)}: ${
        name ? `unknown provider ${JSON.stringify(named)}` : "no model name"
      }`,
      {
        hint: `write provider/name with provider one of ${PROVIDERS.join(", ")} (e.g. openai/gpt-4o-mini)`,
      },
    );
  }
  return { id: `${provider}/${name}`, provider, written };
}
