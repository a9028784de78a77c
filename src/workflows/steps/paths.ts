import { toPointer } from "../definition/source.ts";
import type { FieldPath } from "./types.ts";

/** Reading and rewriting the fields a step type names by path (its transitions and nested blocks). */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The values at a field path (`"*"`: every list item), each with its pointer below `at`. */
export function valuesAt(v: unknown, path: FieldPath, at = ""): Array<{ value: unknown; path: string }> {
  if (path.length === 0) return [{ value: v, path: at }];
  const [head, ...rest] = path;
  if (head === "*") {
    return Array.isArray(v) ? v.flatMap((x, i) => valuesAt(x, rest, `${at}/${i}`)) : [];
  }
  return isObj(v) && head in v ? valuesAt(v[head], rest, `${at}${toPointer([head])}`) : [];
}

/** A copy of `v` with the values at a field path replaced by `fn(value, pointer)`; `v` is not changed. */
export function mapAt(
  v: unknown,
  path: FieldPath,
  fn: (value: unknown, pointer: string) => unknown,
  at = "",
): unknown {
  if (path.length === 0) return fn(v, at);
  const [head, ...rest] = path;
  if (head === "*") return Array.isArray(v) ? v.map((x, i) => mapAt(x, rest, fn, `${at}/${i}`)) : v;
  if (!isObj(v) || !(head in v)) return v;
  return { ...v, [head]: mapAt(v[head], rest, fn, `${at}${toPointer([head])}`) };
}
