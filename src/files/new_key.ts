/**
 * New file keys. Apart from src/files/keys.ts (the rules every key obeys): the ULID package loads
 * node:crypto, ~25 ms a command that names no new key need not pay (docs/benchmarks.md, startup).
 */

import { monotonicFactory } from "ulid";

const nextUlid = monotonicFactory();

/** A new key for a user upload: `files/f_<ULID>`. */
export function newFileKey(): string {
  return `files/f_${nextUlid()}`;
}
