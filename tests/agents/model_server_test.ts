import { jsonSchema, streamText, tool } from "ai";
import { createModels } from "../../src/agents/providers.ts";
import { assertEquals } from "../helpers/assert.ts";
import { startModelServer } from "../helpers/model_server.ts";

Deno.test("scripted model server: streamed chat completions carry text deltas, tool calls and usage", async () => {
  const model = startModelServer();
  try {
    const { model: m } = createModels(
      { provider: "openai", model: "openai/m", base_url: model.url, api_key: "k" },
      {},
    ).resolve();
    model.script({ text: "a longer streamed answer", usage: { input: 9, output: 4 } });
    const text = streamText({ model: m, prompt: "hi" });
    const deltas: string[] = [];
    for await (const d of text.textStream) deltas.push(d);
    assertEquals(deltas.join(""), "a longer streamed answer");
    assertEquals(deltas.length > 1, true);
    assertEquals((await text.usage).inputTokens, 9);

    model.script({ calls: [{ name: "lookup", args: { q: "x" } }] });
    const calls = streamText({
      model: m,
      prompt: "hi",
      tools: { lookup: tool({ description: "d", inputSchema: jsonSchema({ type: "object" }) }) },
    });
    assertEquals((await calls.toolCalls).map((c) => [c.toolName, c.input]), [["lookup", { q: "x" }]]);
    assertEquals(model.requests.map((r) => r.body.stream), [true, true]);
  } finally {
    await model.close();
  }
});
