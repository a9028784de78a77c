/** The JSONata the migrator emits: field names, precedence, and what a built-in call's translation needs. */

import type { Expr } from "./starlark.ts";

const KEYWORDS = new Set(["and", "or", "in", "true", "false", "null", "function"]);

/** A field name in a JSONata path (backquoted when it is not a plain name). */
export function field(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name) ? name : `\`${name}\``;
}

/** Precedence of an atom (a literal, path, call or parenthesised expression). */
export const ATOM = 9;

/** Emitted JSONata with its precedence. */
export interface Out {
  s: string;
  p: number;
}

/** The emitter as calls.ts translates a call with it (expressions.ts's Emitter). */
export interface CallEmitter {
  /** Starlark names bound as JSONata variables. */
  readonly locals: Map<string, string>;
  /** An expression as JSONata (`value`: as a value rather than a condition). */
  emit(e: Expr, value?: boolean): Out;
  /** `o` parenthesised when it binds looser than `min`. */
  wrap(o: Out, min: number): string;
  /** A call of a helper function the emitted program defines. */
  helper(name: string, args: string[]): Out;
  /** Whether an expression is known to be a list. */
  isList(e: Expr): boolean;
}
