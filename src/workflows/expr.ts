import jsonata from "jsonata";
import { type ErrorCode, StationError } from "../errors.ts";

/**
 * JSONata expressions and `${ expr }` templates (docs/design/workflows-dsl.md#expressions).
 * Every expression is compiled once and cached; every evaluation is bounded in time, in depth and in
 * sequence size, so a runaway expression in a workflow file fails its step instead of the station.
 * JSONata itself has no I/O, so these bounds are all the sandboxing it needs.
 */

/** Bounds applied to one evaluation. */
export interface ExprLimits {
  /** Wall-clock budget for one evaluation, in milliseconds. */
  timeoutMs: number;
  /** Maximum nesting of evaluation (AST depth plus recursion). */
  maxDepth: number;
  /** Maximum length of any sequence the expression builds. */
  maxSequence: number;
}

/** The bounds used when the caller gives none. */
export const DEFAULT_LIMITS: ExprLimits = { timeoutMs: 1000, maxDepth: 500, maxSequence: 1_000_000 };

/** What an expression or template is evaluated over: `$` is `data`; bindings are `$name` variables. */
export interface ExprScope {
  data: unknown;
  bindings?: Record<string, unknown>;
  limits?: Partial<ExprLimits>;
}

/** A syntax problem found by parseCheck / checkTemplates; `position` is a 0-based offset in the source. */
export interface ExprProblem {
  code: string;
  message: string;
  position: number;
  token?: string;
  hint?: string;
}

type Compiled = ReturnType<typeof jsonata>;

const CACHE_MAX = 2000;
const cache = new Map<string, Compiled>();

/** JSONata's error objects are plain objects with these fields. */
interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
  value?: unknown;
}

function asFailure(err: unknown): JsonataFailure {
  if (err && typeof err === "object") return err as JsonataFailure;
  return { message: String(err) };
}

/** JSONata spells some operators differently from Python/JavaScript; say so when that is likely why. */
function operatorHint(src: string): string | undefined {
  if (src.includes("!==")) return "JSONata tests inequality with `!=`, not `!==`";
  if (src.includes("==")) return "JSONata compares with `=`, not `==`";
  if (src.includes("&&")) return "JSONata's logical AND is `and`, not `&&` (`&` joins strings)";
  if (src.includes("||")) return "JSONata's logical OR is `or`, not `||`";
  if (/(^|[\s(])!(?!=)/.test(src)) return "JSONata negates with `$not(x)`, not `!x`";
  return undefined;
}

/**
 * JSONata positions point just past the offending token; turn that into the token's 0-based start. The end of
 * the expression is the pseudo-token `(end)`, whose position is already the end.
 */
function tokenStart(f: JsonataFailure): number {
  const end = typeof f.position === "number" ? f.position : 0;
  if (f.token === "(end)") return end;
  const len = typeof f.token === "string" ? f.token.length : 1;
  return Math.max(0, end - len);
}

function limitsKey(limits: ExprLimits): string {
  return `${limits.timeoutMs}/${limits.maxDepth}/${limits.maxSequence}`;
}

/** Returns the syntax problem of a JSONata expression, or null when it parses. */
export function parseCheck(src: string): ExprProblem | null {
  if (src.trim() === "") return { code: "expression_empty", message: "expression is empty", position: 0 };
  try {
    jsonata(src);
    return null;
  } catch (err) {
    const f = asFailure(err);
    return {
      code: f.code ?? "S0000",
      message: f.message ?? "syntax error",
      position: tokenStart(f),
      token: f.token,
      hint: operatorHint(src),
    };
  }
}

/** Compiles (once, then from the cache) a JSONata expression; throws StationError `expression_invalid`. */
export function compileExpression(src: string, limits: Partial<ExprLimits> = {}): Compiled {
  const full = { ...DEFAULT_LIMITS, ...limits };
  const key = `${limitsKey(full)}\u0000${src}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const problem = parseCheck(src);
  if (problem) {
    throw new StationError(
      "expression_invalid",
      `invalid expression ${JSON.stringify(src)} at position ${problem.position}: ${problem.message}`,
      {
        status: 422,
        hint: problem.hint ?? "see https://docs.jsonata.org for the expression syntax",
        details: { expression: src, position: problem.position, token: problem.token, jsonata: problem.code },
      },
    );
  }
  const compiled = jsonata(src, {
    timeout: full.timeoutMs,
    stack: full.maxDepth,
    sequence: full.maxSequence,
  });
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, compiled);
  return compiled;
}

/** Turns JSONata's result (sequences carry extra flags, functions may appear) into plain JSON data. */
function toPlain(value: unknown): unknown {
  if (typeof value === "function") return undefined;
  if (Array.isArray(value)) return value.map(toPlain).filter((v) => v !== undefined);
  if (value && typeof value === "object") {
    if (value instanceof Date) return value.toISOString();
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p = toPlain(v);
      if (p !== undefined) out[k] = p;
    }
    return out;
  }
  return value;
}

const LIMIT_CODES: Record<string, ErrorCode> = {
  D1011: "expression_too_deep",
  D1012: "expression_timeout",
  D2014: "expression_too_large",
  D2015: "expression_too_large",
};

/**
 * Evaluates a JSONata expression over `input` with `$name` bindings, within the limits.
 * Returns plain JSON (undefined when the expression matches nothing). Throws StationError
 * `expression_failed` (or `expression_timeout` / `expression_too_deep` / `expression_too_large`).
 */
export async function evaluate(
  src: string,
  input: unknown,
  bindings: Record<string, unknown> = {},
  limits: Partial<ExprLimits> = {},
): Promise<unknown> {
  const compiled = compileExpression(src, limits);
  try {
    return toPlain(await compiled.evaluate(input, bindings));
  } catch (err) {
    const f = asFailure(err);
    const code = (f.code ? LIMIT_CODES[f.code] : undefined) ?? "expression_failed";
    const where = typeof f.position === "number" ? ` at position ${tokenStart(f)}` : "";
    const hint = code === "expression_failed"
      ? "check the expression against the data it runs on (`stn workflow inspect` shows the context)"
      : "the expression exceeded its evaluation bound: look for unbounded recursion or huge ranges";
    throw new StationError(
      code,
      `expression ${JSON.stringify(src)} failed${where}: ${f.message ?? "error"}`,
      {
        status: 422,
        hint,
        details: { expression: src, position: f.position, token: f.token, jsonata: f.code },
        cause: err,
      },
    );
  }
}

/** Evaluates an expression as a condition: JSONata truthiness (empty/undefined/0/"" are false). */
export async function evaluateCondition(src: string, scope: ExprScope): Promise<boolean> {
  const v = await evaluate(src, scope.data, scope.bindings, scope.limits);
  if (Array.isArray(v)) return v.some((x) => Boolean(x));
  return Boolean(v);
}

/** The standard scope over a run context: `$` and `$ctx` are the context, `$input` the workflow input. */
export function contextScope(ctx: Record<string, unknown>, extra: Record<string, unknown> = {}): ExprScope {
  const workflow = ctx.workflow as { input?: unknown } | undefined;
  return { data: ctx, bindings: { ctx, input: workflow?.input, ...extra } };
}

/** One piece of a template string: literal text or an expression with its offset in the string. */
export type TemplatePart = { text: string } | { expr: string; offset: number };

/** Finds the `}` closing a template whose expression starts at `from`, skipping strings and nested braces. */
function closingBrace(s: string, from: number): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'" || c === "`") {
      const q = c;
      for (i++; i < s.length && s[i] !== q; i++) if (s[i] === "\\" && q !== "`") i++;
      continue;
    }
    if (c === "/" && s[i + 1] === "*") {
      const end = s.indexOf("*/", i + 2);
      if (end < 0) return -1;
      i = end + 1;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/**
 * Splits a string into literal text and `${ expr }` parts; `$${` is a literal `${`.
 * Throws StationError `template_invalid` on an unclosed template.
 */
export function parseTemplate(s: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (s.startsWith("$${", i)) {
      text += "${";
      i += 3;
      continue;
    }
    if (s.startsWith("${", i)) {
      const end = closingBrace(s, i + 2);
      if (end < 0) {
        throw new StationError(
          "template_invalid",
          `unclosed template at position ${i}: ${JSON.stringify(s)}`,
          {
            status: 422,
            hint: "close the template with `}` (write `$${` for a literal `${`)",
            details: { template: s, position: i },
          },
        );
      }
      if (text) parts.push({ text });
      text = "";
      parts.push({ expr: s.slice(i + 2, end), offset: i + 2 });
      i = end + 1;
      continue;
    }
    text += s[i];
    i++;
  }
  if (text || parts.length === 0) parts.push({ text });
  return parts;
}

/** True when the string holds a template or an escape (anything renderTemplates would change). */
export function hasTemplate(s: string): boolean {
  return s.includes("${");
}

/** Returns the syntax problems of every template in a string (positions are offsets in the string). */
export function checkTemplates(s: string): ExprProblem[] {
  if (!hasTemplate(s)) return [];
  let parts: TemplatePart[];
  try {
    parts = parseTemplate(s);
  } catch (err) {
    const e = err as StationError;
    const position = (e.details as { position: number }).position;
    return [{ code: "template_unclosed", message: e.message, position, hint: e.hint }];
  }
  const problems: ExprProblem[] = [];
  for (const p of parts) {
    if (!("expr" in p)) continue;
    const problem = parseCheck(p.expr);
    if (problem) problems.push({ ...problem, position: p.offset + problem.position });
  }
  return problems;
}

/** Stringifies a template value: strings as-is, undefined as "", everything else as JSON. */
function stringify(v: unknown): string {
  if (v === undefined || v === null) return v === null ? "null" : "";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

/**
 * Renders one string: exactly one template keeps the value's type; otherwise the parts are
 * joined with values stringified (objects as JSON).
 */
export async function renderString(s: string, scope: ExprScope): Promise<unknown> {
  if (!hasTemplate(s)) return s;
  const parts = parseTemplate(s);
  if (parts.length === 1 && "expr" in parts[0]) {
    return await evaluate(parts[0].expr, scope.data, scope.bindings, scope.limits);
  }
  let out = "";
  for (const p of parts) {
    out += "expr" in p ? stringify(await evaluate(p.expr, scope.data, scope.bindings, scope.limits)) : p.text;
  }
  return out;
}

/** Renders `${…}` templates in every string of a value, deep over objects and arrays (keys are kept). */
export async function renderTemplates(value: unknown, scope: ExprScope): Promise<unknown> {
  if (typeof value === "string") return await renderString(value, scope);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) out.push(await renderTemplates(v, scope));
    return out;
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await renderTemplates(v, scope);
    return out;
  }
  return value;
}
