import { Emitter, type NameScope } from "./expressions.ts";
import { type Expr, NotStarlark, parseExpression, Unconvertible } from "./starlark.ts";

/**
 * Station transforms of several lines (assignments, one-accumulator `for` loops, `if` blocks of
 * assignments, a final expression or assignment) → one JSONata block `( $x := …; … )`. Station
 * wrapped such bodies itself (docs/migrating-from-station.md#what-it-converts): the last line, or the
 * last assigned name, is the result.
 */

/** A statement of a multi-line transform. */
export type Stmt =
  | { k: "assign"; name: string; op: "=" | "+="; e: Expr }
  | { k: "setitem"; name: string; key: Expr; e: Expr }
  | { k: "append"; name: string; e: Expr }
  | { k: "expr"; e: Expr }
  | { k: "for"; v: string; iter: Expr; body: Stmt[] }
  | { k: "if"; test: Expr; then: Stmt[]; else: Stmt[] };

/** A logical line: text joined across open brackets, with its indentation and 0-based first line. */
interface Line {
  indent: number;
  text: string;
  line: number;
}

function logicalLines(src: string): Line[] {
  const lines: Line[] = [];
  const raw = src.split("\n");
  let depth = 0;
  let cur: Line | undefined;
  raw.forEach((l, n) => {
    const code = l.replace(/#.*$/, (m) => (/["']/.test(m) ? m : ""));
    if (!cur) {
      if (code.trim() === "") return;
      cur = { indent: code.length - code.trimStart().length, text: code.trim(), line: n };
    } else cur.text += " " + code.trim();
    for (const ch of code.replace(/"[^"]*"|'[^']*'/g, "")) {
      if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth--;
    }
    if (depth <= 0) {
      lines.push(cur);
      cur = undefined;
      depth = 0;
    }
  });
  if (cur) throw new NotStarlark("unclosed bracket");
  return lines;
}

/** Parses a transform body: assignments, `for` / `if` blocks, and a final expression. */
export function parseProgram(src: string): Stmt[] {
  const lines = logicalLines(src);
  let i = 0;
  const block = (indent: number): Stmt[] => {
    const out: Stmt[] = [];
    while (i < lines.length && lines[i].indent >= indent) {
      const l = lines[i];
      if (l.indent > indent) throw new NotStarlark(`unexpected indentation on line ${l.line + 1}`);
      i++;
      out.push(statement(l, indent));
    }
    return out;
  };
  const body = (indent: number): Stmt[] => {
    if (i >= lines.length || lines[i].indent <= indent) throw new Unconvertible("an empty block");
    return block(lines[i].indent);
  };
  const statement = (l: Line, indent: number): Stmt => {
    const m = /^(for|if|elif|else|return|pass|break|continue|while|def|try)\b/.exec(l.text);
    const word = m?.[1];
    if (word === "for") {
      const fm = /^for\s+([A-Za-z_]\w*)\s+in\s+(.+):$/.exec(l.text);
      if (!fm) throw new Unconvertible("only `for name in iterable:` loops can be translated");
      return { k: "for", v: fm[1], iter: parseExpression(fm[2]), body: body(indent) };
    }
    if (word === "if") {
      const test = parseExpression(l.text.replace(/^if\s+/, "").replace(/:$/, ""));
      const then = body(indent);
      let otherwise: Stmt[] = [];
      if (i < lines.length && lines[i].indent === indent && /^(elif|else)\b/.test(lines[i].text)) {
        const next = lines[i];
        if (next.text.startsWith("elif")) {
          i++;
          otherwise = [statement({ ...next, text: next.text.slice(2) }, indent)];
        } else {
          i++;
          otherwise = body(indent);
        }
      }
      return { k: "if", test, then, else: otherwise };
    }
    if (word === "return") return { k: "expr", e: parseExpression(l.text.slice(6)) };
    if (word === "pass") throw new Unconvertible("`pass` cannot be translated");
    if (word) throw new Unconvertible(`\`${word}\` cannot be translated`);
    const assign = /^([A-Za-z_]\w*)\s*(\+=|=)(?!=)\s*(.+)$/.exec(l.text);
    if (assign) {
      return { k: "assign", name: assign[1], op: assign[2] as "=" | "+=", e: parseExpression(assign[3]) };
    }
    const setitem = /^([A-Za-z_]\w*)\[(.+)\]\s*=(?!=)\s*(.+)$/.exec(l.text);
    if (setitem) {
      return {
        k: "setitem",
        name: setitem[1],
        key: parseExpression(setitem[2]),
        e: parseExpression(setitem[3]),
      };
    }
    const append = /^([A-Za-z_]\w*)\.append\((.+)\)$/.exec(l.text);
    if (append) return { k: "append", name: append[1], e: parseExpression(append[2]) };
    return { k: "expr", e: parseExpression(l.text) };
  };
  return block(lines[0]?.indent ?? 0);
}

/**
 * A transform (one expression, or statements ending in an expression or an assignment, as Station
 * wrapped it) as JSONata; throws Unconvertible.
 */
export function convertTransform(src: string, scope: NameScope): string {
  const em = new Emitter(scope);
  const stmts = parseProgram(src.includes("__result__") ? src.replaceAll("__result__", "result_") : src);
  if (stmts.length === 0) {
    throw new Unconvertible("an empty transform returns the whole context in Station; write `$`");
  }
  const out: string[] = [];
  const last = stmts[stmts.length - 1];
  for (const s of stmts) out.push(...statement(em, s));
  if (last.k === "assign" || last.k === "setitem" || last.k === "append") out.push(em.locals.get(last.name)!);
  else if (last.k !== "expr") throw new Unconvertible("a transform must end with an expression");
  return em.finish(out);
}

/** JSONata `$x := …` lines for one statement. */
function statement(em: Emitter, s: Stmt): string[] {
  switch (s.k) {
    case "expr":
      return [em.emit(s.e).s];
    case "assign": {
      const value = em.emit(s.e).s;
      const v = em.locals.get(s.name) ?? em.variable(s.name);
      const prev = em.locals.get(s.name);
      em.locals.set(s.name, v);
      if (s.op === "=" && em.isList(s.e) && (!prev || em.lists.has(s.name))) em.lists.add(s.name);
      else if (s.op === "=" || !em.isList(s.e)) em.lists.delete(s.name);
      if (s.op === "=") return [`${v} := ${value}`];
      if (!prev) throw new Unconvertible(`\`${s.name} +=\` before \`${s.name}\` is assigned`);
      return [`${v} := ${em.helper("pyAdd", [v, value]).s}`];
    }
    case "setitem":
    case "append": {
      const v = em.locals.get(s.name);
      if (!v) throw new Unconvertible(`\`${s.name}\` is changed before it is assigned`);
      return [`${v} := ${update(em, s, v)}`];
    }
    case "if": {
      const test = em.truth(s.test);
      const assigned = new Map<string, string>();
      const branch = (list: Stmt[]) => {
        const vals = new Map<string, string>();
        for (const st of list) {
          if (st.k !== "assign" || st.op !== "=") {
            throw new Unconvertible("only plain assignments can be translated inside a top-level `if`");
          }
          vals.set(st.name, em.emit(st.e).s);
          em.lists.delete(st.name);
          if (!assigned.has(st.name)) assigned.set(st.name, em.locals.get(st.name) ?? em.variable(st.name));
        }
        return vals;
      };
      const then = branch(s.then);
      const otherwise = branch(s.else);
      const out: string[] = [];
      for (const [name, v] of assigned) {
        const had = em.locals.has(name);
        const fallback = (m: Map<string, string>) => m.get(name) ?? (had ? v : "null");
        em.locals.set(name, v);
        out.push(`${v} := (${test} ? ${fallback(then)} : ${fallback(otherwise)})`);
      }
      return out;
    }
    case "for": {
      // One accumulator updated per item (`acc.append(x)`, `acc += x`, `acc[k] = x`, optionally under one `if`).
      let body = s.body;
      let cond: Expr | undefined;
      if (body.length === 1 && body[0].k === "if" && body[0].else.length === 0) {
        cond = body[0].test;
        body = body[0].then;
      }
      const upd = body.length === 1 ? body[0] : undefined;
      if (!upd || !(upd.k === "append" || upd.k === "setitem" || (upd.k === "assign" && upd.op === "+="))) {
        throw new Unconvertible("only loops that add to one list, dict or total per item can be translated");
      }
      const acc = em.locals.get(upd.name);
      if (!acc) throw new Unconvertible(`\`${upd.name}\` is changed in a loop before it is assigned`);
      const iter = em.emit(s.iter).s;
      const accParam = `${acc}_acc`;
      const fn = em.lambda(s.v, () => {
        em.locals.set(`\u0000${upd.name}`, acc);
        em.locals.set(upd.name, accParam);
        try {
          const changed = update(em, upd, accParam);
          return cond ? `${em.truth(cond)} ? ${changed} : ${accParam}` : changed;
        } finally {
          em.locals.set(upd.name, acc);
          em.locals.delete(`\u0000${upd.name}`);
        }
      });
      // $reduce's function takes (accumulator, item): put the accumulator first.
      const reducer = fn.replace(/^function\((\$[^)]+)\)/, `function(${accParam}, $1)`);
      return [`${acc} := $reduce(${iter}, ${reducer}, ${acc})`];
    }
  }
}

/** The new value of an accumulator after one update statement. */
function update(em: Emitter, s: Stmt, acc: string): string {
  if (s.k === "append") return `$append(${acc}, [${em.emit(s.e).s}])`;
  if (s.k === "setitem") return `$merge([${acc}, {${em.key(s.key)}: ${em.emit(s.e).s}}])`;
  if (s.k === "assign") return em.helper("pyAdd", [acc, em.emit(s.e).s]).s;
  throw new Unconvertible("unsupported update");
}
