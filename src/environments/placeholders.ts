/**
 * The `{{ .NAME }}` placeholders of an MCP config (Go template style, spec/agents.md), found without
 * rendering anything: `env show` and bundles only need to know which variables a config asks for.
 * Kept in this one module so it can be swapped for the MCP layer's renderer.
 */

const PLACEHOLDER = /\{\{-?\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}/g;

/** The variable names a text's placeholders use, each once, in order of first use. */
export function placeholderNames(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/**
 * The text made parsable as JSON without filling anything: a placeholder outside a string (a bare
 * `{{ .PORT }}`) becomes `0`, as it would be a number once filled; one inside a string stays as written,
 * so callers can still see which values come from variables.
 */
export function parsableJson(text: string): string {
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
    if (ch === "{" && text[i + 1] === "{") {
      PLACEHOLDER.lastIndex = i;
      const m = PLACEHOLDER.exec(text);
      if (m && m.index === i) {
        out += "0";
        i += m[0].length - 1;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

/** True when a string holds at least one placeholder. */
export function hasPlaceholder(text: string): boolean {
  return placeholderNames(text).length > 0;
}
