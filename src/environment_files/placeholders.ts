import { MASK } from "./secrets.ts";

/**
 * `{{ .NAME }}` placeholders of MCP config files (Go text/template style, as Station writes them, with `{{-
 * ... -}}` trim markers tolerated, docs/design/agents.md#mcp-server-configs): finding them without rendering
 * (`env show`, bundles), making a config parse as JSON with them intact, filling them (the MCP layer, at
 * connect time), and hiding filled secrets in messages (which names hold secrets is secrets.ts's rule). The
 * one module for them: environments own the file formats, and mcp/ imports from here, never the reverse.
 */

/** One `{{ … }}` action, whatever it holds. */
const ACTION = /\{\{-?\s*(.*?)\s*-?\}\}/g;
/** The only action stn fills: a variable reference `.NAME`. */
const VARIABLE = /^\.([A-Za-z_][A-Za-z0-9_]*)$/;

/** A `{{ … }}` in a string that is not a plain `{{ .NAME }}`. */
export interface BadPlaceholder {
  text: string;
  /** Offset in the string, for a column. */
  offset: number;
}

/** The variable names a string uses, and any action stn cannot fill. */
export function placeholdersIn(value: string): { names: string[]; bad: BadPlaceholder[] } {
  const names: string[] = [];
  const bad: BadPlaceholder[] = [];
  for (const m of value.matchAll(ACTION)) {
    const v = VARIABLE.exec(m[1]);
    if (v) names.push(v[1]);
    else bad.push({ text: m[0], offset: m.index ?? 0 });
  }
  return { names, bad };
}

/** The variable names a text's placeholders use, each once, in order of first use. */
export function placeholderNames(text: string): string[] {
  return [...new Set(placeholdersIn(text).names)];
}

/** True when the string holds at least one placeholder (its value comes from variables, not the file). */
export function hasPlaceholder(value: string): boolean {
  return placeholdersIn(value).names.length > 0;
}

/** Fills a string's placeholders; `missing` is called for a name without a value (and must throw). */
export function fill(
  value: string,
  lookup: (name: string) => string | undefined,
  missing: (name: string) => never,
): string {
  return value.replace(ACTION, (whole, inner: string) => {
    const v = VARIABLE.exec(inner);
    if (!v) return whole;
    return lookup(v[1]) ?? missing(v[1]);
  });
}

/** Replaces every occurrence of the given secret values with MASK (values under 4 characters are left: too common). */
export function masker(secrets: Iterable<string>): (text: string) => string {
  const list = [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => list.reduce((t, s) => t.replaceAll(s, MASK), text);
}

/** A plain `{{ .NAME }}` starting at the front of a text. */
const LEADING_VARIABLE = /^\{\{-?\s*\.[A-Za-z_][A-Za-z0-9_]*\s*-?\}\}/;

/**
 * A config's text with placeholders written outside strings (`"port": {{ .PORT }}`, which Station fills
 * before parsing) put in quotes, so the file parses as JSON with its placeholders intact and callers can
 * still see which values come from variables. Every value they fill (args, env, headers) is text anyway;
 * lines stay where they were.
 */
export function quoteBarePlaceholders(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === "\\") out += text[++i] ?? "";
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    const bare = ch === "{" ? LEADING_VARIABLE.exec(text.slice(i, i + 200)) : null;
    if (bare) {
      out += `"${bare[0]}"`;
      i += bare[0].length - 1;
      continue;
    }
    out += ch;
  }
  return out;
}
