import { basename, dirname, join } from "./path.ts";

/**
 * Writes a file whole or not at all: the bytes go to a temp file beside it, which is then renamed over
 * the target, so a crash or a full disk never leaves half a file (config.yaml, variables.yml, a bundle).
 * `mode` applies from the first byte (a secret file is never briefly world-readable).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    await Deno.writeFile(tmp, bytes, { mode: options.mode ?? 0o644, createNew: true });
    // The umask may have narrowed the mode at creation; set it exactly.
    if (options.mode !== undefined) await Deno.chmod(tmp, options.mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
