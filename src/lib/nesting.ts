import { StationError } from "../errors.ts";

/**
 * Deepest nesting of objects and arrays accepted in a request body, a run's input or a definition. Real
 * data stays far below it; far deeper values made recursive code (validation, templates) overflow the
 * stack, which answered 500.
 */
export const MAX_NESTING = 256;

/** True when value nests objects/arrays deeper than limit levels; walks iteratively, so any depth is safe. */
export function nestsDeeperThan(value: unknown, limit = MAX_NESTING): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** 400 too_deep for what (e.g. "request body"). */
export function tooDeep(what: string): StationError {
  return new StationError("too_deep", `${what} nests objects or arrays deeper than ${MAX_NESTING} levels`, {
    status: 400,
    hint: `flatten the data: at most ${MAX_NESTING} levels of nested objects and arrays are accepted`,
  });
}

/** Throws 400 too_deep when value nests deeper than MAX_NESTING. */
export function requireShallow<T>(value: T, what: string): T {
  if (nestsDeeperThan(value)) throw tooDeep(what);
  return value;
}
