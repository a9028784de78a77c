/**
 * `{{ .NAME }}` placeholders of MCP config files (Go text/template style, as Station writes them, with
 * `{{- ... -}}` trim markers tolerated) and the secret rule: a name containing TOKEN, KEY, SECRET,
 * PASSWORD, CREDENTIAL or AUTH is a secret, whose value is never logged, answered or stored.
 */

/** One `{{ … }}` action, whatever it holds. */
const ACTION = /\{\{-?\s*(.*?)\s*-?\}\}/g;
/** The only action stn fills: a variable reference `.NAME`. */
const VARIABLE = /^\.([A-Za-z_][A-Za-z0-9_]*)$/;
const SECRET = /TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL|AUTH/i;

/** True for a variable, env or header name whose value is a secret. */
export function isSecretName(name: string): boolean {
  return SECRET.test(name);
}

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

/** Replaces every occurrence of the given secret values with `***` (values under 4 characters are left: too common). */
export function masker(secrets: Iterable<string>): (text: string) => string {
  const list = [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => list.reduce((t, s) => t.replaceAll(s, "***"), text);
}
