import { join } from "node:path";
import { isMap, isScalar, LineCounter } from "yaml";
import { parseYaml, yamlData } from "../lib/yaml.ts";
import { errorMessage, StationError } from "../errors.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { isSecretName, shownValue } from "./secrets.ts";

/**
 * An environment's `variables.yml`: a flat map NAME: value that fills `{{ .NAME }}` placeholders. The
 * file is always written whole (temp file + rename) with mode 0600, since it holds the secrets that
 * bundles and API answers leave out; comments and order in it are kept when one variable changes.
 * This is the one reader of the file: `env show`, bundles, the variables API and the MCP layer (sync,
 * connecting at run time) all see the same values and the same `variables_invalid` errors.
 *
 * A key written without a value (`NAME:` or `NAME: ~`) is not set:
 * docs/design/agents.md#variables-and-secrets takes values from variables.yml, then the process environment,
 * and a key with nothing after it holds no value, so the process environment's `NAME` is used (and a
 * placeholder with neither is "missing", an error naming the file and the variable, instead of silently
 * filling in ""). `env vars list/get` do not show such a key for the same reason. An explicit empty string
 * (`NAME: ""`) is a value, and wins.
 */

/** Variable names: what a `{{ .NAME }}` placeholder can name. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The file's name in an environment folder. */
export const VARIABLES_FILE = "variables.yml";

/** The variables.yml of an environment folder (it may not exist). */
export function variablesFile(envDir: string): string {
  return join(envDir, VARIABLES_FILE);
}

/** Where placeholders get their values. */
export interface VariableSource {
  /** The variables.yml consulted (for hints: it may not exist). */
  file: string;
  get(name: string): string | undefined;
}

/**
 * Overrides, then variables.yml values, then the process environment (the order of
 * docs/design/agents.md#variables-and-secrets).
 */
export function variableSource(
  envDir: string,
  values: Record<string, string>,
  overrides: Record<string, string> = {},
): VariableSource {
  return {
    file: variablesFile(envDir),
    get: (name) =>
      Object.hasOwn(overrides, name)
        ? overrides[name]
        : Object.hasOwn(values, name)
        ? values[name]
        : Deno.env.get(name),
  };
}

/** One variable as it may be shown: secrets masked. */
export interface ShownVariable {
  name: string;
  value: string;
  secret: boolean;
}

/** Throws 400 `invalid_variable_name` unless `name` can be a placeholder's name. */
export function requireVariableName(name: string): string {
  if (VARIABLE_NAME.test(name) && name.length <= 128) return name;
  throw new StationError("invalid_variable_name", `invalid variable name ${JSON.stringify(name)}`, {
    hint: "letters, digits and `_`, not starting with a digit, as in {{ .GITHUB_TOKEN }}",
  });
}

/**
 * 422 `variables_invalid` naming file and line; `details` carries them apart (and the bare reason), so
 * a report that shows the place itself (`stn sync`) does not print it twice.
 */
function invalid(file: string, reason: string, line?: number, hint = INVALID_HINT): StationError {
  return new StationError("variables_invalid", `${file}${line ? `:${line}` : ""}: ${reason}`, {
    hint,
    details: { file, ...(line ? { line } : {}), reason },
  });
}

const INVALID_HINT = "variables.yml is a flat map of NAME: value lines, e.g. `GITHUB_TOKEN: ghp_…`";

async function readText(file: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw invalid(
      file,
      `cannot read the file: ${errorMessage(err)}`,
      undefined,
      "check its permissions",
    );
  }
}

/** Parses the file's text into its YAML document, refusing anything but a flat map of scalars. */
function parse(file: string, text: string) {
  const lines = new LineCounter();
  const doc = parseYaml(text, { lineCounter: lines, prettyErrors: false });
  const lineOf = (node: unknown) => {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range ? lines.linePos(range[0]).line : undefined;
  };
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw invalid(file, `not valid YAML: ${e.message.split("\n")[0]}`, e.linePos?.[0].line);
  }
  if (doc.contents === null) return doc;
  if (!isMap(doc.contents)) throw invalid(file, "expected a map of NAME: value", lineOf(doc.contents));
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!VARIABLE_NAME.test(key)) {
      throw invalid(file, `${JSON.stringify(key)} is not a variable name`, lineOf(pair.key));
    }
    if (pair.value !== null && !isScalar(pair.value)) {
      throw invalid(file, `${key}: expected a single value, not a list or map`, lineOf(pair.key));
    }
  }
  return doc;
}

/** The file's values, aliases expanded within the bounds of src/lib/yaml.ts. */
function dataOf(file: string, doc: ReturnType<typeof parse>): unknown {
  try {
    return yamlData(doc);
  } catch (err) {
    throw invalid(file, errorMessage(err).split("\n")[0]);
  }
}

/**
 * The variables of an environment folder, values as strings (an absent file is no variables); a key
 * without a value is left out, so the process environment fills it (see the top of this file).
 */
export async function readVariables(envDir: string): Promise<Record<string, string>> {
  const file = variablesFile(envDir);
  const text = await readText(file);
  if (text === null) return {};
  const values = (dataOf(file, parse(file, text)) ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(values).filter(([, v]) => v !== null).map(([k, v]) => [k, String(v)]),
  );
}

/** Every variable of an environment with secrets masked, sorted by name. */
export async function listVariables(envDir: string): Promise<ShownVariable[]> {
  const values = await readVariables(envDir);
  return Object.keys(values).sort().map((name) => shown(name, values[name]));
}

/** A variable as it may be shown. */
export function shown(name: string, value: string): ShownVariable {
  return { name, value: shownValue(name, value), secret: isSecretName(name) };
}

/** One variable, masked when secret; 404 `variable_not_found` when it is not set. */
export async function getVariable(envDir: string, environment: string, name: string): Promise<ShownVariable> {
  requireVariableName(name);
  const values = await readVariables(envDir);
  if (!Object.hasOwn(values, name)) throw notSet(environment, name);
  return shown(name, values[name]);
}

function notSet(environment: string, name: string): StationError {
  return new StationError("variable_not_found", `${name} is not set in environment ${environment}`, {
    hint:
      `\`stn env vars list ${environment}\` shows what is set; \`stn env vars set ${environment} ${name} -\` ` +
      "sets it from stdin",
  });
}

/** Sets one variable (creating the file, mode 0600); returns it masked and whether it was new. */
export async function setVariable(
  envDir: string,
  name: string,
  value: string,
): Promise<ShownVariable & { created: boolean }> {
  requireVariableName(name);
  const file = variablesFile(envDir);
  const doc = parse(file, (await readText(file)) ?? "");
  const created = !doc.has(name);
  doc.set(name, value);
  await writeFileAtomic(file, doc.toString(), { mode: 0o600 });
  return { ...shown(name, value), created };
}

/** Removes one variable; 404 `variable_not_found` when it is not set. */
export async function unsetVariable(envDir: string, environment: string, name: string): Promise<void> {
  requireVariableName(name);
  const file = variablesFile(envDir);
  const text = await readText(file);
  const doc = parse(file, text ?? "");
  if (text === null || !doc.has(name)) throw notSet(environment, name);
  doc.delete(name);
  await writeFileAtomic(file, doc.toString(), { mode: 0o600 });
}
