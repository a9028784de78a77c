import { join } from "node:path";
import { isMap, isPair, isScalar, LineCounter, parseDocument } from "yaml";
import { StationError } from "../../errors.ts";

/**
 * `environments/<env>/variables.yml`: a flat map NAME → scalar that fills `{{ .NAME }}` placeholders; a
 * name it lacks is looked up in the process environment.
 */

/** Where placeholders get their values. */
export interface VariableSource {
  /** The variables.yml consulted (for hints: it may not exist). */
  file: string;
  get(name: string): string | undefined;
}

/** The variables.yml of an environment folder. */
export function variablesFile(envDir: string): string {
  return join(envDir, "variables.yml");
}

/** Reads an environment's variables.yml (absent → empty) as strings; a non-scalar value is an error. */
export async function loadVariables(envDir: string): Promise<Map<string, string>> {
  const file = variablesFile(envDir);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return new Map();
    throw new StationError("mcp_config_invalid", `cannot read ${file}: ${(err as Error).message}`, {
      hint: "check its permissions",
    });
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const invalid = (line: number | undefined, message: string) =>
    new StationError("mcp_config_invalid", `${file}${line ? `:${line}` : ""}: ${message}`, {
      hint: "variables.yml is a flat map of NAME: value (strings, numbers or booleans)",
    });
  if (doc.errors.length) {
    throw invalid(doc.errors[0].linePos?.[0]?.line, doc.errors[0].message.split("\n")[0]);
  }
  if (doc.contents === null) return new Map();
  if (!isMap(doc.contents)) throw invalid(1, "the file is not a map");
  const out = new Map<string, string>();
  for (const pair of doc.contents.items) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const name = String(pair.key.value);
    if (pair.value === null || (isScalar(pair.value) && pair.value.value === null)) continue;
    if (!isScalar(pair.value)) {
      const at = pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : undefined;
      throw invalid(at, `${name} is not a scalar`);
    }
    out.set(name, String(pair.value.value));
  }
  return out;
}

/** variables.yml values first, then the process environment (the order of spec/agents.md). */
export function variableSource(
  envDir: string,
  values: Map<string, string>,
  overrides: Record<string, string> = {},
): VariableSource {
  return {
    file: variablesFile(envDir),
    get: (name) => overrides[name] ?? values.get(name) ?? Deno.env.get(name),
  };
}
