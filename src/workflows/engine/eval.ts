import jsonata from "jsonata";

/**
 * JSONata evaluation for the engine until the shared `workflows/expr.ts` lands (issue 3); the
 * contract is the spec's: `$ctx` is the whole context, `$input` the workflow input.
 */

const compiled = new Map<string, ReturnType<typeof jsonata>>();

/** Evaluates a JSONata expression over input with the spec's bindings; undefined when nothing matches. */
export async function evaluate(
  expr: string,
  input: unknown,
  context: Record<string, unknown>,
): Promise<unknown> {
  let e = compiled.get(expr);
  if (!e) {
    e = jsonata(expr);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(expr, e);
  }
  const wf = context.workflow as { input?: unknown } | undefined;
  return await e.evaluate(input, { ctx: context, input: wf?.input });
}

const TEMPLATE = /\$?\$\{([^}]*)\}/g;

/** Evaluates `${…}` templates in every string of value (a lone template keeps its type; `$${` is literal). */
export async function render(value: unknown, context: Record<string, unknown>): Promise<unknown> {
  if (typeof value === "string") {
    const lone = /^\$\{([^}]*)\}$/.exec(value);
    if (lone) return await evaluate(lone[1], context, context);
    let out = "";
    let last = 0;
    for (const m of value.matchAll(TEMPLATE)) {
      out += value.slice(last, m.index);
      last = m.index! + m[0].length;
      if (m[0].startsWith("$$")) {
        out += m[0].slice(1);
        continue;
      }
      const v = await evaluate(m[1], context, context);
      out += v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
    }
    return out + value.slice(last);
  }
  if (Array.isArray(value)) return await Promise.all(value.map((v) => render(v, context)));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await render(v, context);
    return out;
  }
  return value;
}
