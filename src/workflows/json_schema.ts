/**
 * JSON Schema (2020-12) for workflows with one Ajv: schemas checked as schemas, inputs and outputs against
 * them.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import metaValidator from "./json_schema_meta.js";
import { AJV_OPTIONS, META_SCHEMA } from "./json_schema_options.ts";
import { errorMessage, StationError } from "../errors.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import type { Problem } from "./steps/types.ts";

/**
 * JSON Schema (draft 2020-12) for workflows, with one Ajv: checking a definition's `inputSchema` /
 * `outputSchema` as schemas, and checking a run's input and result against them.
 */

// validateSchema off: compile() would check each schema against the meta-schema again, compiling it at every
// start (~35 ms); schemaProblem checks every schema before it is compiled, with the meta-schema compiled
// ahead of time (json_schema_meta.js), and the ledger stores only definitions that passed it.
const ajv = new Ajv2020({ ...AJV_OPTIONS, validateSchema: false });
const validateMeta = metaValidator as unknown as ValidateFunction;

/** The first way `schema` breaks its meta-schema (null: broken, no detail), or undefined when it does not. */
function metaProblem(schema: Record<string, unknown>): ErrorObject | null | undefined {
  if (schema.$schema === undefined || schema.$schema === META_SCHEMA) {
    return validateMeta(schema) ? undefined : validateMeta.errors?.[0] ?? null;
  }
  return ajv.validateSchema(schema) ? undefined : ajv.errors?.[0] ?? null;
}

/**
 * Compiled schemas by their JSON text, least recently used first. Compiling costs milliseconds and a
 * sync re-validates the same files at every start; bounded so it cannot grow with every definition.
 */
const compiled = new Map<string, { schema: object; validate: ValidateFunction }>();
const MAX_COMPILED = 500;

function validator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let hit = compiled.get(key);
  if (hit) compiled.delete(key);
  else {
    hit = { schema, validate: ajv.compile(schema) };
    if (compiled.size >= MAX_COMPILED) {
      const [oldKey, old] = compiled.entries().next().value!;
      compiled.delete(oldKey);
      ajv.removeSchema(old.schema); // Ajv keeps its own cache by schema object
    }
  }
  compiled.set(key, hit);
  return hit.validate;
}

const KEYWORDS = [
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "const",
  "default",
  "format",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "additionalProperties",
  "description",
  "title",
  "examples",
  "minItems",
  "maxItems",
  "oneOf",
  "anyOf",
  "allOf",
];

/** The path of the first place a key appears in a value (depth-first). */
function findKey(v: unknown, key: string, at: string[] = []): string[] | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  if (!Array.isArray(v) && key in v) return [...at, key];
  for (const [k, x] of Object.entries(v)) {
    const hit = findKey(x, key, [...at, k]);
    if (hit) return hit;
  }
  return undefined;
}

/** What is wrong with a JSON Schema, if anything (`at` is the path inside the schema). */
export function schemaProblem(schema: Record<string, unknown>): Problem | undefined {
  if (compiled.has(JSON.stringify(schema))) return undefined;
  const e = metaProblem(schema);
  if (e !== undefined) {
    return {
      code: "invalid_json_schema",
      message: `not a valid JSON Schema: ${e ? `${e.instancePath || "/"} ${e.message}` : "rejected"}`,
      hint: "schemas follow JSON Schema draft 2020-12 (type, properties, required, enum, items…)",
      at: e?.instancePath ? e.instancePath.slice(1).split("/").map(unescapePointer) : [],
    };
  }
  try {
    validator(schema);
    return undefined;
  } catch (err) {
    const message = errorMessage(err);
    const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
    const near = keyword ? didYouMean(keyword, KEYWORDS) : undefined;
    return {
      code: "invalid_json_schema",
      message: keyword
        ? `unknown JSON Schema keyword \`${keyword}\``
        : `JSON Schema does not compile: ${message}`,
      hint: near ? `did you mean \`${near}\`?` : "schemas follow JSON Schema draft 2020-12",
      at: (keyword && findKey(schema, keyword)) || [],
    };
  }
}

function unescapePointer(s: string): string {
  return s.replaceAll("~1", "/").replaceAll("~0", "~");
}

function problems(v: ValidateFunction): { path: string; message: string }[] {
  return (v.errors ?? []).map((e) => ({ path: e.instancePath || "/", message: e.message ?? "invalid" }));
}

/** The input with the schema's defaults applied; a 400 `input_invalid` listing each problem otherwise. */
export function checkInput(
  def: { id: string; inputSchema?: Record<string, unknown> },
  input: Record<string, unknown>,
): Record<string, unknown> {
  if (!def.inputSchema) return input;
  const copy = structuredClone(input);
  const v = validator(def.inputSchema);
  if (v(copy)) return copy;
  const issues = problems(v);
  throw new StationError(
    "input_invalid",
    `input does not match the inputSchema of ${def.id}: ${
      issues.map((i) => `${i.path} ${i.message}`).join("; ")
    }`,
    {
      status: 400,
      details: { issues },
      hint: "pass --input with the fields the workflow's inputSchema asks for",
    },
  );
}

/** Null when the result matches `outputSchema` (or there is none); else what is wrong. */
export function outputProblem(
  def: { outputSchema?: Record<string, unknown> },
  result: unknown,
): string | null {
  if (!def.outputSchema) return null;
  return schemaViolation(def.outputSchema, structuredClone(result));
}

/** Null when the value matches the schema; else each problem as `path message`. Fills in defaults (in place). */
export function schemaViolation(schema: Record<string, unknown>, value: unknown): string | null {
  const v = validator(schema);
  if (v(value)) return null;
  return problems(v).map((i) => `${i.path} ${i.message}`).join("; ");
}
