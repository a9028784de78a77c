/**
 * Imports a module when a command first needs it, not when stn starts. `deno run` loads (reads and
 * parses) every module a literal `import("./x.ts")` names before the program runs, so the runtime's ~350
 * modules would cost every client command; a specifier resolved at run time is loaded only when imported.
 * Callers name the module's type with `typeof import(...)`, which only the type checker reads (it keeps the
 * edge in tests/architecture_test.ts's graph); scripts/compile.ts embeds each such module in the binary.
 */

/** Imports `specifier` resolved against `base` (the caller's `import.meta.url`), typed as `T`. */
export function lazyImport<T>(specifier: string, base: string): Promise<T> {
  return import(new URL(specifier, base).href);
}
