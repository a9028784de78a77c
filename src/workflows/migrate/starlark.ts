/**
 * A parser for the subset of Starlark that Station's workflow files use in switch conditions and
 * transforms (docs/migrating-from-station.md#what-it-converts): expressions, and transform bodies made of
 * assignments, simple `for` / `if` blocks and a final expression. What it does not know is an
 * Unconvertible error saying what, so the migration reports it instead of guessing.
 */

/** A construct the migration cannot translate, with the reason shown to the user. */
export class Unconvertible extends Error {}

/** Text that is not Starlark at all (it may already be JSONata, e.g. a file migrated before). */
export class NotStarlark extends Unconvertible {}

/** An expression node. */
export type Expr =
  | { k: "num"; v: string }
  | { k: "str"; v: string }
  | { k: "const"; v: boolean | null }
  | { k: "name"; id: string }
  | { k: "attr"; obj: Expr; name: string }
  | { k: "index"; obj: Expr; idx: Expr }
  | { k: "slice"; obj: Expr; lo?: Expr; hi?: Expr }
  | { k: "call"; fn: Expr; args: Expr[] }
  | { k: "bin"; op: string; l: Expr; r: Expr }
  | { k: "not"; e: Expr }
  | { k: "neg"; e: Expr }
  | { k: "cond"; test: Expr; a: Expr; b: Expr }
  | { k: "list"; items: Expr[] }
  | { k: "dict"; entries: Array<[Expr, Expr]> }
  | { k: "comp"; elt: Expr | [Expr, Expr]; v: string; iter: Expr; conds: Expr[] };

type Tok = { t: "num" | "str" | "name" | "op" | "end"; v: string };

const OPS = [
  "==",
  "!=",
  "<=",
  ">=",
  "//",
  "**",
  "+=",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ",",
  ":",
  ".",
  "=",
];
const UNSUPPORTED_WORDS: Record<string, string> = {
  lambda: "`lambda` has no JSONata equivalent here; write a JSONata `function($x) { … }`",
  def: "function definitions cannot be translated; bind a JSONata function: `$f := function($x) { … }`",
  while: "`while` loops cannot be translated; iterate over a list with `$map`/`$reduce`",
  load: "`load` cannot be translated",
};

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      const m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(i))!;
      out.push({ t: "num", v: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      if (src.startsWith(c.repeat(3), i)) {
        throw new Unconvertible("triple-quoted strings cannot be translated");
      }
      let s = "";
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === "\\") {
          const e = src[i + 1];
          s += e === "n" ? "\n" : e === "t" ? "\t" : e;
          i += 2;
        } else s += src[i++];
      }
      if (i >= src.length) throw new NotStarlark("unterminated string");
      i++;
      out.push({ t: "str", v: s });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      out.push({ t: "name", v: m[0] });
      i += m[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new NotStarlark(`\`${c}\` is not an operator stn can translate`);
    out.push({ t: "op", v: op });
    i += op.length;
  }
  out.push({ t: "end", v: "" });
  return out;
}

class Parser {
  #toks: Tok[];
  #i = 0;
  constructor(src: string) {
    this.#toks = tokenize(src);
  }

  get peek(): Tok {
    return this.#toks[this.#i];
  }
  next(): Tok {
    return this.#toks[this.#i++];
  }
  is(v: string, t: Tok["t"] = "op"): boolean {
    return this.peek.t === t && this.peek.v === v;
  }
  eat(v: string, t: Tok["t"] = "op"): boolean {
    if (!this.is(v, t)) return false;
    this.#i++;
    return true;
  }
  expect(v: string): void {
    if (!this.eat(v)) throw new NotStarlark(`expected \`${v}\`, found \`${this.peek.v || "end"}\``);
  }
  done(): void {
    if (this.peek.t !== "end") throw new NotStarlark(`unexpected \`${this.peek.v}\``);
  }

  /** A full expression, with a bare tuple (`a, b`) as a list. */
  expr(): Expr {
    const first = this.test();
    if (!this.is(",")) return first;
    const items = [first];
    while (this.eat(",") && !this.endsGroup()) items.push(this.test());
    return { k: "list", items };
  }

  endsGroup(): boolean {
    return this.peek.t === "end" || [")", "]", "}", ":", "="].includes(this.peek.v) && this.peek.t === "op";
  }

  test(): Expr {
    const a = this.or();
    if (!this.eat("if", "name")) return a;
    const test = this.or();
    if (!this.eat("else", "name")) throw new Unconvertible("a conditional expression needs `else`");
    return { k: "cond", test, a, b: this.test() };
  }

  or(): Expr {
    let l = this.and();
    while (this.eat("or", "name")) l = { k: "bin", op: "or", l, r: this.and() };
    return l;
  }

  and(): Expr {
    let l = this.not();
    while (this.eat("and", "name")) l = { k: "bin", op: "and", l, r: this.not() };
    return l;
  }

  not(): Expr {
    if (this.eat("not", "name")) return { k: "not", e: this.not() };
    return this.compare();
  }

  compare(): Expr {
    let l = this.sum();
    for (;;) {
      let op: string | undefined;
      if (this.peek.t === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(this.peek.v)) {
        op = this.next().v;
      } else if (this.eat("in", "name")) op = "in";
      else if (this.is("not", "name") && this.#toks[this.#i + 1]?.v === "in") {
        this.#i += 2;
        op = "not in";
      } else if (this.eat("is", "name")) op = this.eat("not", "name") ? "!=" : "==";
      if (!op) return l;
      const r = this.sum();
      if (l.k === "bin" && ["==", "!=", "<", "<=", ">", ">="].includes(l.op)) {
        throw new Unconvertible(
          "chained comparisons (`a < b < c`) cannot be translated; write `a < b and b < c`",
        );
      }
      l = { k: "bin", op, l, r };
    }
  }

  sum(): Expr {
    let l = this.term();
    while (this.peek.t === "op" && (this.is("+") || this.is("-"))) {
      const op = this.next().v;
      l = { k: "bin", op, l, r: this.term() };
    }
    return l;
  }

  term(): Expr {
    let l = this.unary();
    while (this.peek.t === "op" && ["*", "/", "//", "%"].includes(this.peek.v)) {
      const op = this.next().v;
      const r = this.unary();
      if (op === "%" && l.k === "str") {
        throw new Unconvertible(
          "`%` string formatting cannot be translated; concatenate with `&`: `$string(n) & ' items'`",
        );
      }
      l = { k: "bin", op, l, r };
    }
    return l;
  }

  unary(): Expr {
    if (this.eat("-")) return { k: "neg", e: this.unary() };
    if (this.eat("+")) return this.unary();
    const e = this.postfix();
    if (this.is("**")) throw new Unconvertible("`**` cannot be translated; use `$power(a, b)` in JSONata");
    return e;
  }

  postfix(): Expr {
    let e = this.atom();
    for (;;) {
      if (this.eat(".")) {
        const n = this.next();
        if (n.t !== "name") throw new NotStarlark("expected a name after `.`");
        e = { k: "attr", obj: e, name: n.v };
      } else if (this.eat("[")) {
        const lo = this.is(":") ? undefined : this.expr();
        if (!this.eat(":")) {
          this.expect("]");
          e = { k: "index", obj: e, idx: lo! };
          continue;
        }
        const hi = this.is("]") || this.is(":") ? undefined : this.expr();
        if (this.is(":")) {
          throw new Unconvertible(
            "slices with a step (`a[i:j:k]`) cannot be translated; use `$filter(a, function($v, $i) { $i % k = 0 })`",
          );
        }
        this.expect("]");
        e = { k: "slice", obj: e, lo, hi };
      } else if (this.eat("(")) {
        const args: Expr[] = [];
        while (!this.is(")")) {
          if (this.peek.t === "name" && this.#toks[this.#i + 1]?.v === "=") {
            throw new Unconvertible(
              "keyword arguments cannot be translated; e.g. `sorted(xs, key=…)` is `$sort(xs, function($a, $b) { $a.n > $b.n })`",
            );
          }
          if (this.is("*") || this.is("**")) {
            throw new Unconvertible("`*args` cannot be translated; pass the arguments one by one");
          }
          args.push(this.test());
          if (!this.eat(",")) break;
        }
        this.expect(")");
        e = { k: "call", fn: e, args };
      } else return e;
    }
  }

  atom(): Expr {
    const t = this.next();
    if (t.t === "num") return { k: "num", v: t.v };
    if (t.t === "str") {
      let v = t.v;
      while (this.peek.t === "str") v += this.next().v; // adjacent literals concatenate
      return { k: "str", v };
    }
    if (t.t === "name") {
      if (t.v in UNSUPPORTED_WORDS) throw new Unconvertible(UNSUPPORTED_WORDS[t.v]);
      if (t.v === "True" || t.v === "true") return { k: "const", v: true };
      if (t.v === "False" || t.v === "false") return { k: "const", v: false };
      if (t.v === "None" || t.v === "null") return { k: "const", v: null };
      return { k: "name", id: t.v };
    }
    if (t.v === "(") {
      if (this.eat(")")) return { k: "list", items: [] };
      const e = this.expr();
      this.expect(")");
      return e;
    }
    if (t.v === "[") {
      if (this.eat("]")) return { k: "list", items: [] };
      const first = this.test();
      if (this.is("for", "name")) {
        const c = this.comp(first);
        this.expect("]");
        return c;
      }
      const items = [first];
      while (this.eat(",") && !this.is("]")) items.push(this.test());
      this.expect("]");
      return { k: "list", items };
    }
    if (t.v === "{") {
      if (this.eat("}")) return { k: "dict", entries: [] };
      const key = this.test();
      this.expect(":");
      const val = this.test();
      if (this.is("for", "name")) {
        const c = this.comp([key, val]);
        this.expect("}");
        return c;
      }
      const entries: Array<[Expr, Expr]> = [[key, val]];
      while (this.eat(",") && !this.is("}")) {
        const k = this.test();
        this.expect(":");
        entries.push([k, this.test()]);
      }
      this.expect("}");
      return { k: "dict", entries };
    }
    throw new NotStarlark(`unexpected \`${t.v || "end of expression"}\``);
  }

  /** `for v in iter [if cond]…` after the element of a comprehension. */
  comp(elt: Expr | [Expr, Expr]): Expr {
    this.expect_name("for");
    const v = this.next();
    if (v.t !== "name") throw new Unconvertible("expected a loop variable");
    if (this.is(",")) {
      throw new Unconvertible(
        "unpacking several loop variables cannot be translated; loop over one name and use `$x[0]`, `$x[1]`",
      );
    }
    this.expect_name("in");
    const iter = this.or();
    const conds: Expr[] = [];
    while (this.eat("if", "name")) conds.push(this.or());
    if (this.is("for", "name")) {
      throw new Unconvertible(
        "nested comprehensions cannot be translated; nest `$map` calls (`$map(xs, function($x) { $map($x.ys, …) })`)",
      );
    }
    return { k: "comp", elt, v: v.v, iter, conds };
  }

  expect_name(v: string): void {
    if (!this.eat(v, "name")) throw new NotStarlark(`expected \`${v}\``);
  }
}

/** Parses one Starlark expression. */
export function parseExpression(src: string): Expr {
  const p = new Parser(src);
  const e = p.expr();
  p.done();
  return e;
}
