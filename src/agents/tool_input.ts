import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { errorMessage } from "../errors.ts";

/**
 * The check of a tool call's arguments before the tool runs: the model's arguments text must be JSON, and
 * the value must match the tool's input schema. What is wrong goes back to the model as the call's error,
 * so a model that sent `{"text": "unterminated` is told so instead of the tool being called with `{}`.
 */

// Tool schemas come from MCP servers as they wrote them (draft-07 or 2020-12, vendor keywords), so this Ajv
// is lenient about the schema itself: unknown keywords are ignored and the schema is not validated against
// a meta-schema. It never fills in defaults: the tool gets the arguments the model sent.
const ajv = new Ajv2020({
  strict: false,
  validateSchema: false,
  addUsedSchema: false,
  validateFormats: false,
  allErrors: true,
});

/** Compiled validators by tool schema object (a run's tools keep theirs for the run); null: none compiles. */
const compiled = new WeakMap<object, ValidateFunction | null>();

function validator(schema: Record<string, unknown>): ValidateFunction | null {
  if (compiled.has(schema)) return compiled.get(schema)!;
  let validate: ValidateFunction | null;
  try {
    // `$schema` names a draft this Ajv may not hold (draft-07); the keywords are what is checked.
    const { $schema: _draft, ...rest } = schema;
    validate = ajv.compile(rest);
  } catch {
    // A schema Ajv cannot compile (a remote $ref, a malformed keyword) cannot refuse a call: the tool checks.
    validate = null;
  }
  compiled.set(schema, validate);
  return validate;
}

/**
 * What keeps a value from matching a schema a server wrote (`path message` each; none when it matches or
 * the schema does not compile), checked as leniently as tool arguments are.
 */
export function schemaIssues(value: unknown, schema: Record<string, unknown>): string[] {
  const validate = validator(schema);
  if (validate === null || validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "invalid"}`);
}

/** The arguments as a value, or why they are unusable: not JSON, or not matching the tool's input schema. */
export function checkToolInput(
  input: unknown,
  schema: Record<string, unknown>,
): { value: unknown } | { problem: string } {
  let value = input;
  // The AI SDK hands over the raw text when the model's arguments did not parse as JSON.
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (err) {
      return {
        problem: `the arguments are not valid JSON (${
          errorMessage(err)
        }); send them again as one JSON object`,
      };
    }
  }
  if (value === undefined) value = {};
  const issues = schemaIssues(value, schema);
  if (issues.length === 0) return { value };
  return {
    problem: `the arguments do not match the tool's input schema: ${issues.join("; ")}; ` +
      "call it again with arguments that do",
  };
}
