/**
 * The assertions tests use. JSR (@std/assert) is not reachable from these machines, so they come
 * from node:assert, wrapped in the names Deno's standard library uses.
 */
import assert from "node:assert/strict";

export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  assert.deepStrictEqual(actual, expected, msg);
}

export function assertNotEquals<T>(actual: T, expected: T, msg?: string): void {
  assert.notDeepStrictEqual(actual, expected, msg);
}

/** Asserts actual is expected itself (Object.is): the same value, or the same object, not an equal copy. */
export function assertStrictEquals<T>(actual: unknown, expected: T, msg?: string): asserts actual is T {
  assert.strictEqual(actual, expected, msg);
}

export function assertNotStrictEquals(actual: unknown, expected: unknown, msg?: string): void {
  assert.notStrictEqual(actual, expected, msg);
}

export function assert_(value: unknown, msg?: string): asserts value {
  assert.ok(value, msg);
}
export { assert_ as assert };

export function assertMatch(actual: string, expected: RegExp, msg?: string): void {
  assert.match(actual, expected, msg);
}

export function assertNotMatch(actual: string, expected: RegExp, msg?: string): void {
  assert.doesNotMatch(actual, expected, msg);
}

export function assertStringIncludes(actual: string, expected: string, msg?: string): void {
  assert.ok(
    actual.includes(expected),
    msg ?? `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
}

/** Asserts fn throws (an instance of type when given) and returns the error. */
export function assertThrows(fn: () => unknown, type?: new (...args: never[]) => Error, msg?: string): Error {
  try {
    fn();
  } catch (err) {
    if (type && !(err instanceof type)) {
      throw new assert.AssertionError({ message: msg ?? `expected ${type.name}, got ${err}` });
    }
    return err as Error;
  }
  throw new assert.AssertionError({ message: msg ?? "expected the function to throw" });
}

/** Asserts the promise rejects (with an instance of type when given) and returns the error. */
export async function assertRejects(
  fn: () => Promise<unknown>,
  type?: new (...args: never[]) => Error,
  msg?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    if (type && !(err instanceof type)) {
      throw new assert.AssertionError({ message: msg ?? `expected ${type.name}, got ${err}` });
    }
    return err as Error;
  }
  throw new assert.AssertionError({ message: msg ?? "expected the promise to reject" });
}

/**
 * What a rejection or a throw must satisfy: a predicate over the error (true passes), a RegExp its message
 * must match, an Error class, or an object whose fields the error must have.
 */
export type ErrorCheck = assert.AssertPredicate;

/** Asserts the promise (or fn's promise) rejects, with an error that check accepts when one is given. */
export async function assertRejectsWith(
  promise: Promise<unknown> | (() => Promise<unknown>),
  check?: ErrorCheck,
  msg?: string,
): Promise<void> {
  await (check === undefined ? assert.rejects(promise) : assert.rejects(promise, check, msg));
}

/** Asserts fn throws an error that check accepts. */
export function assertThrowsWith(fn: () => unknown, check: ErrorCheck, msg?: string): void {
  assert.throws(fn, check, msg);
}
