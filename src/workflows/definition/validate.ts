import { checkGraph } from "./graph.ts";
import { errorMap, findings, type SchemaFinding } from "./issues.ts";
import { normalizeAliases, unwrapApiBody } from "./normalize.ts";
import { definitionSchema, type WorkflowDefinition } from "./schema.ts";
import { pointerSegments, type Position } from "./source.ts";

/**
 * The workflow validator (docs/design/workflows-dsl.md#validation): every problem as an issue with a stable
 * code, a JSON pointer into what the user wrote, its line/column when the source is text, and a hint. Three
 * sources, in this order: the loader's alias rewriting, the zod schema (built from the step-type registry),
 * and the graph pass over the states. Checks run on the alias-normalised form; pointers are mapped back to
 * the user's spelling.
 */

/** One validation finding. */
export interface ValidationIssue {
  code: string;
  /** JSON pointer into the file as written, e.g. `/states/3/conditions/0/if`. */
  path: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}

/** The validator's answer; `definition` is the normalised definition when valid. */
export interface ValidationResult {
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  definition?: WorkflowDefinition;
}

export interface ValidateOptions {
  /** Finds the source position of a pointer (text sources); see ParsedSource.locate. */
  locate?: (segments: string[], options?: { value?: boolean; offset?: number }) => Position | undefined;
  /** The id to use when the definition has none (from the file name). */
  defaultId?: string;
}

/** An issue before positions; `source: true` when its path already names what the user wrote. */
type Found = {
  code: string;
  path: string;
  message: string;
  hint?: string;
  source?: boolean;
  offset?: number;
};

/** Issues about a value (rather than a field being there at all) point at the value, not the key. */
const VALUE_CODES = new Set([
  "invalid_expression",
  "invalid_template",
  "invalid_duration",
  "invalid_cron",
  "invalid_timezone",
  "invalid_value",
  "invalid_agent",
  "invalid_id",
  "unknown_target",
  "unknown_type",
]);

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Where a finding sits in the document, as a sort key: the index of each key or item on its path in
 * what was written (a missing key: -1, before the present ones). An unknown field sorts first in its
 * mapping (a misspelt field often explains the mapping's other findings), then what is about the
 * mapping itself.
 */
function documentKey(value: unknown, f: SchemaFinding): number[] {
  const key: number[] = [];
  let v: unknown = value;
  for (const seg of pointerSegments(f.path)) {
    const i = Array.isArray(v) ? Number(seg) : isObj(v) ? Object.keys(v).indexOf(seg) : -1;
    key.push(i);
    v = isObj(v) || Array.isArray(v) ? (v as Record<string, unknown>)[seg] : undefined;
  }
  if (f.code === "unknown_field") key[key.length - 1] = -3;
  return [...key, -2];
}

function byKey(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** The schema's findings in document order, without a "missing field" that an unknown field's "did you mean" names. */
function schemaFindings(value: unknown): { found: Found[]; data?: WorkflowDefinition } {
  const parsed = definitionSchema().safeParse(value, { error: errorMap });
  if (parsed.success) return { found: [], data: parsed.data };
  const all = parsed.error.issues.flatMap(findings);
  const named = new Set(
    all.filter((f) => f.code === "unknown_field").map((f) => {
      const near = /^did you mean `([^`]+)`\?$/.exec(f.hint)?.[1];
      return near && f.path.replace(/[^/]*$/, near);
    }),
  );
  const found = all.filter((f) => !(f.code === "missing_field" && named.has(f.path)))
    .map((f) => ({ f, key: documentKey(value, f) }))
    .sort((a, b) => byKey(a.key, b.key))
    .map((x) => x.f);
  return { found };
}

/**
 * Station's `{{ … }}` templates are plain text in stn; a string that holds one most likely came from a
 * Station file and would silently stay literal, so it is a warning wherever it appears.
 */
function literalBraces(value: unknown, path: string): Found[] {
  if (typeof value === "string") {
    return /\{\{.*?\}\}/s.test(value)
      ? [{
        code: "literal_braces",
        path,
        message: "`{{ … }}` is not a template in stn: it stays literal text",
        hint: "write `${ expr }` (JSONata); `stn workflow migrate` converts Station's `{{ … }}`",
      }]
      : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => literalBraces(v, `${path}/${i}`));
  if (isObj(value)) {
    return Object.entries(value).flatMap(([k, v]) =>
      literalBraces(v, `${path}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`)
    );
  }
  return [];
}

/** `debounce` acts on event-triggered starts only: without `triggers` it would silently do nothing. */
function idleDebounce(value: unknown): Found[] {
  if (!isObj(value) || value.debounce === undefined || value.triggers !== undefined) return [];
  return [{
    code: "debounce_without_triggers",
    path: "/debounce",
    message: "`debounce` applies to runs started by events, and this workflow has no `triggers`",
    hint: "add `triggers: [{event: NAME}]`; direct and cron starts are never debounced (docs/workflows.md)",
  }];
}

/** Validates a parsed definition (native, Go-project or API-body form). */
export function validateDefinition(raw: unknown, options: ValidateOptions = {}): ValidationResult {
  const finish = (
    errors: Found[],
    warnings: Found[],
    map: (p: string) => string,
    definition?: WorkflowDefinition,
  ) => {
    const place = (f: Found): ValidationIssue => {
      const path = unwrapped.sourcePath(f.source ? f.path : map(f.path));
      const pos = options.locate?.(pointerSegments(path), {
        value: VALUE_CODES.has(f.code),
        offset: f.offset,
      });
      const issue: ValidationIssue = { code: f.code, path: path || "/", message: f.message };
      if (pos) [issue.line, issue.column] = [pos.line, pos.column];
      if (f.hint) issue.hint = f.hint;
      return issue;
    };
    return {
      valid: errors.length === 0,
      errors: errors.map(place),
      warnings: warnings.map(place),
      ...(errors.length === 0 && definition ? { definition } : {}),
    };
  };
  const unwrapped = unwrapApiBody(raw);
  const body = unwrapped.value;
  if (!isObj(body)) {
    const what = body === null || body === undefined ? "empty" : Array.isArray(body) ? "a list" : typeof body;
    return finish(
      [{
        code: "invalid_definition",
        path: "",
        message: `a workflow must be a mapping, got ${what}`,
        hint: "start the file with `id:` and `states:`",
      }],
      [],
      (p) => p,
    );
  }
  const withId = body.id === undefined && options.defaultId ? { ...body, id: options.defaultId } : body;
  const norm = normalizeAliases(withId);
  const aliases: Found[] = norm.problems.map((p) => ({ ...p, source: true }));
  const schema = schemaFindings(norm.value);
  // A state whose alias could not be rewritten has no type; the alias problem already says why.
  const explained = (f: Found) =>
    f.code === "missing_type" && aliases.some((a) => a.path.startsWith(norm.sourcePath(f.path) + "/"));
  const graph = checkGraph(norm.value, (p) => unwrapped.sourcePath(norm.sourcePath(p)));
  const errors = [...aliases, ...schema.found.filter((f) => !explained(f)), ...graph.errors];
  const warnings = [...literalBraces(norm.value, ""), ...idleDebounce(norm.value), ...graph.warnings];
  return finish(errors, warnings, norm.sourcePath, schema.data);
}
