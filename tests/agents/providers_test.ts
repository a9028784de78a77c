import { createModels } from "../../src/agents/providers.ts";
import { StationError } from "../../src/errors.ts";
import { assertEquals, assertStringIncludes, assertThrows } from "../helpers/assert.ts";

const ai = { provider: "openai" as const, model: "openai/gpt-4o-mini" };

Deno.test("providers: model references resolve through one registry, with the Go project's spellings", () => {
  const models = createModels(ai, { OPENAI_API_KEY: "sk", GEMINI_API_KEY: "g", ANTHROPIC_API_KEY: "a" });
  assertEquals(models.resolve().id, "openai/gpt-4o-mini");
  assertEquals(models.resolve("gpt-5-mini").id, "openai/gpt-5-mini", "a bare name is ai.provider's");
  assertEquals(models.resolve("googleai/gemini-2.5-flash").id, "gemini/gemini-2.5-flash");
  assertEquals(models.resolve("anthropic/claude-sonnet-4-5").id, "anthropic/claude-sonnet-4-5");
  assertEquals(models.resolve("openai/ns/with-slash").model.modelId, "ns/with-slash");
  const unknown = assertThrows(() => models.resolve("cohere/command"), StationError) as StationError;
  assertEquals(unknown.code, "model_provider_unknown");
  assertStringIncludes(unknown.hint!, "openai, anthropic, gemini, openai-compatible");
});

Deno.test("providers: keys from config or the usual variables; openai-compatible needs none but a base URL", () => {
  const none = createModels(ai, {});
  const missing = assertThrows(() => none.resolve("gemini/gemini-2.5-flash"), StationError) as StationError;
  assertEquals(missing.code, "model_api_key_missing");
  assertStringIncludes(missing.hint!, "GEMINI_API_KEY or GOOGLE_API_KEY");
  assertStringIncludes(
    (assertThrows(() => none.resolve(), StationError) as StationError).hint!,
    "ai.api_key",
  );
  assertEquals(createModels({ ...ai, api_key: "sk" }, {}).resolve().id, "openai/gpt-4o-mini");
  assertEquals(createModels(ai, { GOOGLE_API_KEY: "g" }).resolve("gemini/x").id, "gemini/x");
  const local = createModels({
    provider: "openai-compatible",
    model: "openai-compatible/llama3.2",
    base_url: "http://127.0.0.1:11434/v1",
  }, {});
  assertEquals(local.resolve().id, "openai-compatible/llama3.2");
  const noUrl = assertThrows(
    () => createModels({ ...ai, provider: "openai-compatible" }, {}).resolve("openai-compatible/x"),
    StationError,
  ) as StationError;
  assertEquals(noUrl.code, "config_invalid");
});
