import { ATOM, type CallEmitter, field, type Out } from "./jsonata_out.ts";
import { type Expr, Unconvertible } from "./starlark.ts";

/** Station's Starlark built-ins and methods (`len`, `str`, `getattr`, `.get`, `.lower`, …) → JSONata. */

/** A call of a Starlark built-in, `json.*` or a string/dict method, as JSONata. */
export function emitCall(em: CallEmitter, e: Extract<Expr, { k: "call" }>): Out {
  const args = e.args;
  const a = () => args.map((x) => em.emit(x).s);
  const arity = (name: string, ...counts: number[]) => {
    if (!counts.includes(args.length)) {
      throw new Unconvertible(`\`${name}\` with ${args.length} argument(s) cannot be translated`);
    }
  };
  if (e.fn.k === "name" && !em.locals.has(e.fn.id)) {
    const f = e.fn.id;
    switch (f) {
      case "len":
        arity(f, 1);
        if (em.isList(args[0])) return { s: `$count(${a()[0]})`, p: ATOM };
        if (args[0].k === "str") return { s: `$length(${a()[0]})`, p: ATOM };
        return em.helper("pyLen", a());
      case "str":
        arity(f, 1);
        return { s: `$string(${a()[0]})`, p: ATOM };
      case "int":
        arity(f, 1);
        return { s: `$floor($number(${a()[0]}))`, p: ATOM };
      case "float":
        arity(f, 1);
        return { s: `$number(${a()[0]})`, p: ATOM };
      case "bool":
        arity(f, 1);
        return { s: `$boolean(${a()[0]})`, p: ATOM };
      case "abs":
        arity(f, 1);
        return { s: `$abs(${a()[0]})`, p: ATOM };
      case "sum":
      case "max":
      case "min":
        arity(f, 1);
        return { s: `$${f}(${a()[0]})`, p: ATOM };
      case "sorted":
        arity(f, 1);
        return { s: `$sort(${a()[0]})`, p: ATOM };
      case "list":
        arity(f, 1);
        return { s: `[${a()[0]}]`, p: ATOM };
      case "any":
      case "all": {
        arity(f, 1);
        const test = f === "any" ? "$boolean($v)" : "$not($boolean($v))";
        return {
          s: `($count($filter(${a()[0]}, function($v) { ${test} })) ${f === "any" ? ">" : "="} 0)`,
          p: ATOM,
        };
      }
      case "hasattr": {
        arity(f, 2);
        if (args[1].k !== "str") {
          throw new Unconvertible("`hasattr` with a computed name cannot be translated");
        }
        return { s: `$exists(${em.wrap(em.emit(args[0]), ATOM)}.${field(args[1].v)})`, p: ATOM };
      }
      case "getattr":
        arity(f, 2, 3);
        if (args[1].k !== "str") {
          throw new Unconvertible("`getattr` with a computed name cannot be translated");
        }
        return lookup(em, args[0], args[1].v, args[2]);
    }
    throw new Unconvertible(
      `the function \`${f}\` has no translation; see JSONata's functions (docs.jsonata.org)`,
    );
  }
  if (e.fn.k === "attr") {
    const obj = e.fn.obj;
    const m = e.fn.name;
    if (obj.k === "name" && obj.id === "json" && !em.locals.has("json")) {
      if (m === "encode") return { s: `$string(${a()[0]})`, p: ATOM };
      if (m === "decode") return { s: `$eval(${a()[0]})`, p: ATOM };
    }
    const self = () => em.emit(obj).s;
    switch (m) {
      case "get":
        arity(m, 1, 2);
        if (args[0].k !== "str") throw new Unconvertible("`.get` with a computed key cannot be translated");
        return lookup(em, obj, args[0].v, args[1]);
      case "lower":
        return { s: `$lowercase(${self()})`, p: ATOM };
      case "upper":
        return { s: `$uppercase(${self()})`, p: ATOM };
      case "strip":
        arity(m, 0);
        return { s: `$trim(${self()})`, p: ATOM };
      case "startswith":
        arity(m, 1);
        return { s: `$substring(${self()}, 0, $length(${a()[0]})) = ${a()[0]}`, p: 4 };
      case "endswith":
        arity(m, 1);
        return { s: `$substring(${self()}, -$length(${a()[0]})) = ${a()[0]}`, p: 4 };
      case "split":
        arity(m, 1);
        return { s: `$split(${self()}, ${a()[0]})`, p: ATOM };
      case "join":
        arity(m, 1);
        return { s: `$join(${a()[0]}, ${self()})`, p: ATOM };
      case "replace":
        arity(m, 2);
        return { s: `$replace(${self()}, ${a()[0]}, ${a()[1]})`, p: ATOM };
      case "keys":
        arity(m, 0);
        return { s: `$keys(${self()})`, p: ATOM };
      case "values":
        arity(m, 0);
        return { s: `[$each(${self()}, function($v) { $v })]`, p: ATOM };
    }
    throw new Unconvertible(
      `the method \`.${m}()\` has no translation; see JSONata's string and array functions (docs.jsonata.org)`,
    );
  }
  throw new Unconvertible("calling a computed function cannot be translated");
}

/** `getattr(o, "k", d)` / `o.get("k", d)`: the field, or the default when it is missing. */
function lookup(em: CallEmitter, obj: Expr, key: string, fallback?: Expr): Out {
  const path = `${em.wrap(em.emit(obj), ATOM)}.${field(key)}`;
  if (!fallback) return { s: path, p: ATOM };
  return { s: `($exists(${path}) ? ${path} : ${em.emit(fallback).s})`, p: ATOM };
}
