import { resultText } from "../../src/mcp/client/mod.ts";
import { assertEquals } from "../helpers/assert.ts";

Deno.test("mcp content: every block kind becomes text a model can read; structured content once", () => {
  const cases: Array<[unknown, string]> = [
    [{ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, "a\nb"],
    [{ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] }, "[audio: audio/wav, 3 bytes]"],
    [{ content: [{ type: "resource", resource: { uri: "file:///a.txt", text: "inside" } }] }, "inside"],
    [
      { content: [{ type: "resource", resource: { uri: "file:///a.bin", mimeType: "x/y", blob: "AAA=" } }] },
      "[resource: file:///a.bin (x/y, 2 bytes)]",
    ],
    [
      { content: [{ type: "resource_link", uri: "file:///r", name: "report" }] },
      "[resource link: file:///r (report)]",
    ],
    // Structured content already in a text block (as the spec asks servers to send it) is not repeated.
    [{ content: [{ type: "text", text: '{"n": 1}' }], structuredContent: { n: 1 } }, '{"n": 1}'],
    [{ content: [], structuredContent: { n: 1 } }, '{"n":1}'],
    [{ toolResult: ["legacy"] }, '["legacy"]'],
    [{ content: [] }, ""],
  ];
  for (const [result, text] of cases) assertEquals(resultText(result as never), text, JSON.stringify(result));
});
