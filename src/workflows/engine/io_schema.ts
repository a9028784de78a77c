import { Ajv2020 } from "ajv/dist/2020.js";
import { StationError } from "../../errors.ts";
import type { WorkflowDefinition } from "../definition/schema.ts";

/** `inputSchema` / `outputSchema` checks with a real JSON Schema (2020-12) validator. */

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true, useDefaults: true });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

function validator(schema: Record<string, unknown>) {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) compiled.set(key, v = ajv.compile(schema));
  return v;
}

function problems(v: ReturnType<typeof ajv.compile>): { path: string; message: string }[] {
  return (v.errors ?? []).map((e) => ({ path: e.instancePath || "/", message: e.message ?? "invalid" }));
}

/** The input with the schema's defaults applied; a 400 `input_invalid` listing each problem otherwise. */
export function checkInput(def: WorkflowDefinition, input: Record<string, unknown>): Record<string, unknown> {
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
export function outputProblem(def: WorkflowDefinition, result: unknown): string | null {
  if (!def.outputSchema) return null;
  const v = validator(def.outputSchema);
  if (v(structuredClone(result))) return null;
  return problems(v).map((i) => `${i.path} ${i.message}`).join("; ");
}
