import { Ajv2020 } from "ajv/dist/2020.js";
import { assertEquals } from "../helpers/assert.ts";
import { META_MODULE, metaSchemaModule } from "../../scripts/json_schema_meta.ts";
import { schemaProblem } from "../../src/workflows/json_schema.ts";
import { AJV_OPTIONS } from "../../src/workflows/json_schema_options.ts";

Deno.test("json_schema_meta.js is what scripts/json_schema_meta.ts writes (run it after an Ajv upgrade)", () => {
  assertEquals(Deno.readTextFileSync(META_MODULE), metaSchemaModule());
});

Deno.test("schemas are checked as Ajv's own meta-schema check does: the same verdict and first problem", () => {
  const ajv = new Ajv2020(AJV_OPTIONS);
  const schemas: Record<string, unknown>[] = [
    { type: "object", properties: { n: { type: "integer", minimum: 0 } }, required: ["n"] },
    { type: "array", items: { type: "string" }, minItems: 1 },
    { type: "object", properties: { n: { type: "integr" } } },
    { type: "object", required: "n" },
    { properties: { a: { enum: [] } }, additionalProperties: 3 },
    { $schema: "https://json-schema.org/draft/2020-12/schema", type: 5 },
    { $defs: { x: { type: "string" } }, $ref: "#/$defs/x" },
  ];
  for (const schema of schemas) {
    const valid = ajv.validateSchema(schema) as boolean;
    const e = ajv.errors?.[0];
    const problem = schemaProblem(structuredClone(schema));
    if (valid) assertEquals(problem, undefined, JSON.stringify(schema));
    else {
      assertEquals(
        problem?.message,
        `not a valid JSON Schema: ${e ? `${e.instancePath || "/"} ${e.message}` : "rejected"}`,
        JSON.stringify(schema),
      );
    }
  }
});
