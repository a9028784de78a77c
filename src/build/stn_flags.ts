/**
 * How stn is launched from this checkout. `deno compile` bakes the same V8 flags into the binary
 * (scripts/compile.ts, run by `deno task compile`) and scripts/stn passes them too; tests/scripts_test.ts
 * keeps the three equal.
 *
 * --max-semi-space-size=1 and --expose-gc keep a file transfer's memory bounded: a 1 MiB new space is
 * collected often and cheaply, and a transfer asks for a young-generation collection every few MiB
 * (src/lib/young_gc.ts), so the dead buffers of its chunks never pile up. They replace
 * --optimize-for-size, which bounded memory with full collections that halved download speed
 * (docs/benchmarks.md, "Downloads").
 */
export const STN_V8_FLAGS = "--max-semi-space-size=1,--expose-gc";

/** `deno run` arguments that run main.ts as the shipped `stn` runs. */
export const STN_RUN_ARGS = ["run", "-A", "--quiet", `--v8-flags=${STN_V8_FLAGS}`];
