import { assertEquals } from "../helpers/assert.ts";
import { answerShape, inferSchema, resultOf } from "../../src/faker/shape.ts";

const tool = { name: "t", description: "", input_schema: { type: "object" } };
const text = (t: string) => ({ content: [{ type: "text", text: t }] });

Deno.test("faker shape: a JSON answer's shape is inferred, and generated data is sent as JSON indented like it", () => {
  const real = text(JSON.stringify({ items: [{ id: 1, name: "a" }], next: null }, null, 2));
  const shape = answerShape(tool, real);
  assertEquals(shape.form, "json");
  assertEquals(shape.schema, {
    type: "object",
    properties: {
      items: {
        type: "array",
        items: {
          type: "object",
          properties: { id: { type: "number" }, name: { type: "string" } },
          required: ["id", "name"],
        },
      },
      next: { type: "null" },
    },
    required: ["items", "next"],
  });
  assertEquals(resultOf(shape, { items: [], next: null }), text('{\n  "items": [],\n  "next": null\n}'));
  assertEquals(inferSchema([]), { type: "array" });
});

Deno.test("faker shape: text stays text; an output schema wins; an error answer gives no example", () => {
  assertEquals(answerShape(tool, text("plain words")).schema, { type: "string" });
  assertEquals(resultOf(answerShape(tool, text("x")), "generated"), text("generated"));
  const out = { type: "object", properties: { n: { type: "integer" } } };
  const structured = answerShape({ ...tool, output_schema: out }, {
    ...text('{"n":1}'),
    structured_content: { n: 1 },
  });
  assertEquals([structured.form, structured.schema, structured.textField], ["structured", out, undefined]);
  assertEquals(resultOf(structured, { n: 7 }), { ...text('{"n":7}'), structured_content: { n: 7 } });
  const failed = answerShape(tool, { ...text("boom"), is_error: true });
  assertEquals([failed.form, failed.example], ["text", undefined]);
});
