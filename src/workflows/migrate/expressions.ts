import { emitCall } from "./calls.ts";
import { ATOM, type CallEmitter, field, type Out } from "./jsonata_out.ts";
import { type Expr, parseExpression, Unconvertible } from "./starlark.ts";

/**
 * Station's Starlark (switch conditions, transforms, the inside of `{{ }}`) → JSONata with the same
 * meaning. Where Python's semantics depend on a type only known at run time (`in`, `+`, `len`,
 * `x[k]`), the output calls a small helper defined at the front of the expression; where a literal
 * settles the type, the plain JSONata operator is used.
 */

/** How names resolve, which follows where Station evaluated the expression. */
export interface NameScope {
  /**
   * `transform`: every context key is a global, `input`/`ctx` are the whole context;
   * `condition`: context keys are globals (switch without dataPath, templates);
   * `data`: a switch with dataPath — `_value`/`val`/`result` are the value, and a map value's keys
   * shadow the context's.
   */
  mode: "transform" | "condition" | "data";
  /**
   * With `data`: the dataPath, when the condition input is the context merged with the value (see
   * mergedDataPath); without it, a name other than the bindings throws NeedsMerge.
   */
  valuePath?: string;
  /** State ids whose output Station also wrote at the top-level id but stn writes only at their resultPath. */
  moved: ReadonlyMap<string, string>;
}

/** A condition names context keys next to a dataPath: it needs the merged input (mergedDataPath). */
export class NeedsMerge extends Error {}

/** Station's switch variables for a dataPath value: the context, with a map value's keys over it. */
export function mergedDataPath(path: string): string {
  return `$type(${path}) = 'object' ? $merge([$, ${path}]) : $`;
}

/** The path a mergedDataPath was made of (a file migrated before), if `dataPath` is one. */
export function unmergedDataPath(dataPath: string): string | undefined {
  const m = /^\$type\((.+)\) = 'object' \? \$merge\(\[\$, (.+)\]\) : \$$/.exec(dataPath);
  return m && m[1] === m[2] ? m[1] : undefined;
}

const HELPERS: Record<string, string> = {
  pyIn:
    'function($x, $c) { $type($c) = "string" ? $contains($c, $x) : $type($c) = "object" ? $x in $keys($c) : $x in $c }',
  pyLen:
    'function($v) { $type($v) = "string" ? $length($v) : $type($v) = "object" ? $count($keys($v)) : $count($v) }',
  pyAdd:
    'function($a, $b) { $type($a) = "string" ? $a & $b : $type($a) = "array" ? $append($a, $b) : $a + $b }',
  // Python's a[i:j] on a string or a list: bounds clamped, negative ones from the end, a list stays a
  // list (`[$v]` would flatten an item that is itself a list).
  pySlice: "function($o, $i, $j) { ( $n := $type($o) = 'string' ? $length($o) : $count($o); " +
    "$b := function($x, $d) { $x = null ? $d : $x < 0 ? $max([0, $n + $x]) : $min([$x, $n]) }; " +
    "$f := $b($i, 0); $t := $b($j, $n); $type($o) = 'string' ? $substring($o, $f, $max([0, $t - $f])) : " +
    "$reduce($o, function($a, $v, $k) { $k >= $f and $k < $t ? $append($a, $type($v) = 'array' ? [[$v]] : [$v]) : $a }, []) ) }",
  pyAt:
    'function($o, $k) { $type($o) = "string" ? $substring($o, $k, 1) : $type($k) = "number" ? $o[$k] : $lookup($o, $k) }',
};

/** JSONata's built-in function names: a Starlark variable of that name must not shadow one. */
const BUILTINS = new Set(
  ("sum count max min average string substring substringBefore substringAfter lowercase uppercase length " +
    "trim pad contains split join match replace eval base64encode base64decode number abs floor ceil round " +
    "power sqrt random formatNumber formatBase formatInteger parseInteger boolean not exists append sort " +
    "reverse shuffle distinct zip keys lookup spread merge sift each error assert type map filter single " +
    "reduce now millis fromMillis toMillis ctx input").split(" "),
);
/** Station's data paths (`$.a.b`, `$`, legacy bare `a.b`) as a JSONata path. */
export function convertPath(path: string): string {
  if (!/^\$?(\.?[A-Za-z_][\w-]*)*$/.test(path.trim())) return path; // not a Station path (already JSONata)
  const p = path.trim().replace(/^\$\.?/, "");
  if (p === "") return "$";
  return p.split(".").map(field).join(".");
}

// Precedence of the emitted JSONata (higher binds tighter).
const PREC: Record<string, number> = {
  or: 1,
  and: 2,
  "=": 4,
  "!=": 4,
  "<": 4,
  "<=": 4,
  ">": 4,
  ">=": 4,
  in: 4,
  "&": 5,
  "+": 5,
  "-": 5,
  "*": 6,
  "/": 6,
  "%": 6,
};
export class Emitter implements CallEmitter {
  readonly helpers = new Set<string>();
  /** Starlark names bound as JSONata variables (assignments, loop variables). */
  readonly locals = new Map<string, string>();
  /** Locals only ever assigned lists (so `len` and `+` need no run-time type test). */
  readonly lists = new Set<string>();
  #lambda = 0;
  readonly scope: NameScope;

  constructor(scope: NameScope) {
    this.scope = scope;
  }

  variable(name: string): string {
    return BUILTINS.has(name) ? `$${name}_` : `$${name}`;
  }

  /** Inside a function body `$` is no longer the context (or condition input): reach it as `$$`. */
  name(id: string): Out {
    const local = this.locals.get(id);
    if (local) return { s: local, p: ATOM };
    const inner = this.#lambda > 0;
    const { mode, valuePath, moved } = this.scope;
    if (mode === "transform" && (id === "input" || id === "ctx")) return { s: inner ? "$$" : "$", p: ATOM };
    if (mode === "data" && (id === "_value" || id === "val" || id === "result")) {
      return { s: valuePath && valuePath !== "$" ? `$ctx.${valuePath}` : inner ? "$$" : "$", p: ATOM };
    }
    if (mode === "data" && !valuePath) throw new NeedsMerge(id);
    const path = moved.get(id) ?? field(id);
    return { s: inner ? `$$.${path}` : path, p: ATOM };
  }

  wrap(o: Out, min: number): string {
    return o.p < min ? `(${o.s})` : o.s;
  }

  helper(name: string, args: string[]): Out {
    this.helpers.add(name);
    return { s: `$${name}(${args.join(", ")})`, p: ATOM };
  }

  /** `value`: the result is data (Python's `and`/`or` return an operand); else a truth value. */
  emit(e: Expr, value = true): Out {
    switch (e.k) {
      case "num":
        return { s: e.v.replace(/^\./, "0."), p: ATOM };
      case "str":
        return { s: quote(e.v), p: ATOM };
      case "const":
        return { s: String(e.v), p: ATOM };
      case "name":
        return this.name(e.id);
      case "attr":
        return { s: `${this.wrap(this.emit(e.obj), ATOM)}.${field(e.name)}`, p: ATOM };
      case "index":
        return this.index(e.obj, e.idx);
      case "slice":
        return this.helper("pySlice", [e.obj, e.lo, e.hi].map((x) => (x ? this.emit(x).s : "null")));
      case "call":
        return emitCall(this, e);
      case "not":
        return { s: `$not(${this.truth(e.e)})`, p: ATOM };
      case "neg":
        return { s: `-${this.wrap(this.emit(e.e), ATOM)}`, p: 7 };
      case "cond":
        return { s: `(${this.truth(e.test)} ? ${this.emit(e.a).s} : ${this.emit(e.b).s})`, p: ATOM };
      case "list":
        return { s: `[${e.items.map((x) => this.emit(x).s).join(", ")}]`, p: ATOM };
      case "dict":
        return {
          s: `{${e.entries.map(([k, v]) => `${this.key(k)}: ${this.emit(v).s}`).join(", ")}}`,
          p: ATOM,
        };
      case "comp":
        return this.comprehension(e);
      case "bin":
        return this.binary(e.op, e.l, e.r, value);
    }
  }

  /** An expression used as a condition: JSONata's boolean casting matches Python's truthiness. */
  truth(e: Expr): string {
    return this.emit(e, false).s;
  }

  key(k: Expr): string {
    const o = this.emit(k);
    return k.k === "str" ? o.s : `$string(${o.s})`;
  }

  index(obj: Expr, idx: Expr): Out {
    const o = this.wrap(this.emit(obj), ATOM);
    if (idx.k === "str") return { s: `${o}.${field(idx.v)}`, p: ATOM };
    // A number indexes a list directly; on a value that may be a string, Python gives a character.
    if ((idx.k === "num" || (idx.k === "neg" && idx.e.k === "num")) && this.isList(obj)) {
      return { s: `${o}[${this.emit(idx).s}]`, p: ATOM };
    }
    return this.helper("pyAt", [o, this.emit(idx).s]);
  }

  binary(op: string, l: Expr, r: Expr, value: boolean): Out {
    if (op === "and" || op === "or") {
      if (!value) {
        const p = PREC[op];
        return {
          s: `${this.wrap(this.emit(l, false), p)} ${op} ${this.wrap(this.emit(r, false), p + 1)}`,
          p,
        };
      }
      // Python returns an operand (`x or "default"`); JSONata's and/or return booleans.
      const a = this.emit(l).s;
      const b = this.emit(r).s;
      return { s: op === "or" ? `(${a} ? ${a} : ${b})` : `(${a} ? ${b} : ${a})`, p: ATOM };
    }
    if (op === "in" || op === "not in") {
      const x = this.emit(l).s;
      let s: string;
      if (r.k === "list") s = `${this.wrap(this.emit(l), 5)} in ${this.emit(r).s}`;
      else if (r.k === "str") s = `$contains(${this.emit(r).s}, ${x})`;
      else s = this.helper("pyIn", [x, this.emit(r).s]).s;
      return op === "in" ? { s, p: r.k === "list" ? 4 : ATOM } : { s: `$not(${s})`, p: ATOM };
    }
    if (
      (op === "==" || op === "!=") && (l.k === "const" && l.v === null || r.k === "const" && r.v === null)
    ) {
      const x = this.emit(l.k === "const" && l.v === null ? r : l).s;
      return op === "=="
        ? { s: `($not($exists(${x})) or ${x} = null)`, p: ATOM }
        : { s: `($exists(${x}) and ${x} != null)`, p: ATOM };
    }
    if (op === "+") {
      const str = l.k === "str" || r.k === "str" || isStrCall(l) || isStrCall(r);
      const list = this.isList(l) || this.isList(r);
      if (str) return this.infix("&", l, r);
      if (list) return { s: `$append(${this.emit(l).s}, ${this.emit(r).s})`, p: ATOM };
      if (l.k === "num" || r.k === "num" || isNumCall(l) || isNumCall(r)) return this.infix("+", l, r);
      return this.helper("pyAdd", [this.emit(l).s, this.emit(r).s]);
    }
    if (op === "//") return { s: `$floor(${this.infix("/", l, r).s})`, p: ATOM };
    if (op === "%" && l.k !== "num" && r.k !== "num") {
      throw new Unconvertible("`%` on values of unknown type (string formatting?) cannot be translated");
    }
    return this.infix(op === "==" ? "=" : op, l, r);
  }

  infix(op: string, l: Expr, r: Expr): Out {
    const p = PREC[op];
    return { s: `${this.wrap(this.emit(l), p)} ${op} ${this.wrap(this.emit(r), p + 1)}`, p };
  }

  /** True when an expression is known to be a list before it runs. */
  isList(e: Expr): boolean {
    return e.k === "list" || e.k === "comp" || (e.k === "name" && this.lists.has(e.id));
  }

  /** `fn` runs with `v` bound to its parameter (a JSONata function body). */
  lambda(v: string, fn: () => string): string {
    const param = this.variable(v);
    const before = this.locals.get(v);
    this.locals.set(v, param);
    this.#lambda++;
    try {
      return `function(${param}) { ${fn()} }`;
    } finally {
      this.#lambda--;
      if (before === undefined) this.locals.delete(v);
      else this.locals.set(v, before);
    }
  }

  comprehension(e: Extract<Expr, { k: "comp" }>): Out {
    let items = this.emit(e.iter).s;
    if (e.conds.length > 0) {
      const test = () => e.conds.map((c) => this.wrap(this.emit(c, false), 3)).join(" and ");
      items = `$filter(${items}, ${this.lambda(e.v, test)})`;
    }
    if (Array.isArray(e.elt)) {
      const [k, v] = e.elt;
      return {
        s: `$merge($map(${items}, ${this.lambda(e.v, () => `{${this.key(k)}: ${this.emit(v).s}}`)}))`,
        p: ATOM,
      };
    }
    const elt = e.elt;
    if (elt.k === "name" && elt.id === e.v) return { s: `[${items}]`, p: ATOM };
    // `[…]` keeps a one-item result a list (JSONata would unwrap a singleton sequence).
    return { s: `[$map(${items}, ${this.lambda(e.v, () => this.emit(elt).s)})]`, p: ATOM };
  }

  /** Wraps the result with the helper definitions it uses. */
  finish(body: string[]): string {
    const defs = [...this.helpers].sort().map((h) => `$${h} := ${HELPERS[h]}`);
    if (defs.length === 0 && body.length === 1) return body[0];
    return `(\n  ${[...defs, ...body].join(";\n  ")}\n)`;
  }
}

/** A JSONata string literal, single-quoted (it reads better inside YAML). */
function quote(v: string): string {
  return `'${JSON.stringify(v).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`;
}

function isStrCall(e: Expr): boolean {
  return e.k === "call" && e.fn.k === "name" && e.fn.id === "str";
}
function isNumCall(e: Expr): boolean {
  return e.k === "call" && e.fn.k === "name" && ["len", "int", "float", "sum", "abs"].includes(e.fn.id);
}

/** A switch condition (a truth value) as JSONata; throws Unconvertible. */
export function convertCondition(src: string, scope: NameScope): string {
  const em = new Emitter(scope);
  const e = parseExpression(src);
  return em.finish([em.emit(e, false).s]);
}

/** An expression whose value is used (a template's inside) as JSONata; throws Unconvertible. */
export function convertValue(src: string, scope: NameScope): string {
  const em = new Emitter(scope);
  return em.finish([em.emit(parseExpression(src)).s]);
}
