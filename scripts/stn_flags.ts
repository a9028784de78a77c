/**
 * How stn is launched from this checkout. `deno compile` bakes the same V8 flags into the binary
 * (deno.json's compile task) and scripts/stn passes them too; tests/scripts_test.ts keeps the three equal.
 *
 * --optimize-for-size: V8 then collects the short-lived buffers of a file transfer before they pile up,
 * so streaming a file through `stn serve` raises its RSS by tens of MiB instead of ~100 (README, Files).
 */
export const STN_V8_FLAGS = "--optimize-for-size";

/** `deno run` arguments that run main.ts as the shipped `stn` runs. */
export const STN_RUN_ARGS = ["run", "-A", "--quiet", `--v8-flags=${STN_V8_FLAGS}`];
