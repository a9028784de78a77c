/** `--record FILE` of `stn agent run` and `stn workflow run`: where the cassette goes, checked before the run. */

import { dirname, resolve } from "../lib/path.ts";
import type { Cassette } from "../contract/cassette.ts";
import { errorMessage, usageError } from "../errors.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { note } from "./output.ts";

/** The help line of `--record`. */
export const RECORD_HELP =
  "write the run's model and tool calls to FILE, a cassette `stn test` replays offline (YAML; secrets masked)";

/**
 * Checks `--record FILE` before a (paid) run starts: its folder must exist, and an existing file must be a
 * cassette — stn overwrites only what it wrote.
 */
export async function recordTarget(path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  const full = resolve(path);
  const dir = await Deno.stat(dirname(full)).catch(() => undefined);
  if (!dir?.isDirectory) {
    throw usageError(
      "invalid_usage",
      `--record ${path}: the folder ${dirname(full)} does not exist`,
      "create it first",
    );
  }
  const existing = await Deno.readTextFile(full).catch((err) =>
    err instanceof Deno.errors.NotFound ? undefined : `unreadable: ${errorMessage(err)}`
  );
  if (existing !== undefined && !/^stn_cassette:/m.test(existing.slice(0, 200))) {
    throw usageError(
      "invalid_usage",
      `--record ${path}: the file exists and is not a cassette; stn does not overwrite it`,
      "give a new file name (or remove the file yourself)",
    );
  }
  return full;
}

/** Writes the cassette (whole or not at all) and says so on stderr. */
export async function saveRecording(path: string, cassette: Cassette): Promise<void> {
  const { writeCassette } = await lazyImport<typeof import("../testing/cassette.ts")>(
    "../testing/cassette.ts",
    import.meta.url,
  );
  await writeCassette(path, cassette);
  const n = cassette.runs.length;
  note((style) => style.dim(`recorded ${n} agent run${n === 1 ? "" : "s"} to ${path}`));
}
