/**
 * Log fields for a scope of work (an API request, a step message): every line logged inside it carries
 * them. Apart from src/log.ts because AsyncLocalStorage loads Deno's Node layer (node:async_hooks and what
 * it needs), which a CLI command that logs no scope need not pay (docs/benchmarks.md, startup).
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { useScopeFields } from "./log.ts";

const scope = new AsyncLocalStorage<Record<string, unknown>>();
useScopeFields(() => scope.getStore());

/** Runs fn with fields added to every line it logs (e.g. `request_id`). */
export function withLogFields<T>(fields: Record<string, unknown>, fn: () => T): T {
  return scope.run({ ...scope.getStore(), ...fields }, fn);
}
