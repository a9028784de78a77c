import { convertValue, type NameScope } from "./expressions.ts";
import { Unconvertible } from "./starlark.ts";

/**
 * Station's `{{ … }}` text (never interpolated by Station, but written to be) → stn's `${ … }`
 * templates, and `input.variables` values of the form `$.a.b`, which Station resolved against the
 * context, → `${a.b}`.
 */

/** The converted string, or the reason it cannot be converted; null when there is nothing to convert. */
export function convertTemplates(s: string, scope: NameScope): { text: string } | { error: string } | null {
  if (!/\{\{[\s\S]*?\}\}/.test(s)) return null;
  // Station interpolated `${key}` in agent tasks itself: those stay templates in stn too.
  let out = "";
  let last = 0;
  for (const m of s.matchAll(/\{\{([\s\S]*?)\}\}/g)) {
    out += s.slice(last, m.index);
    const inner = m[1].trim();
    if (inner.includes("|")) {
      return {
        error:
          `\`{{ ${inner} }}\` uses a template filter (\`|\`), which has no translation; call the function instead, e.g. \`\${$uppercase(name)}\``,
      };
    }
    if (/^\./.test(inner)) {
      return {
        error:
          `\`{{ ${inner} }}\` is a Go template, which has no translation; write \`\${path}\` with the value's path in the context`,
      };
    }
    try {
      out += "${" + convertValue(inner, scope) + "}";
    } catch (err) {
      if (!(err instanceof Unconvertible)) throw err;
      return { error: `\`{{ ${inner} }}\`: ${err.message}` };
    }
    last = m.index! + m[0].length;
  }
  return { text: out + s.slice(last) };
}

/** `$.a.b` (Station's context reference in `input.variables`) → `${a.b}`; null for any other string. */
export function convertVariableRef(s: string): string | null {
  const m = /^\$\.([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)$/.exec(s.trim());
  return m ? "${" + m[1] + "}" : null;
}
