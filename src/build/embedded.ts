import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * Where `scripts/compile.ts` stages the files it embeds besides the module graph (the nats-server and
 * the build manifest), relative to the checkout's root. A compiled binary's virtual file system keeps
 * the checkout's layout, so the same path relative to this module finds them there.
 */
export const EMBED_DIR = ".build/embed";

/** The manifest's file name in EMBED_DIR. */
export const MANIFEST_FILE = "manifest.json";

/** What a build recorded about itself: written by scripts/compile.ts, read by `stn version` and the NATS lookup. */
export const BuildManifestSchema = z.strictObject({
  stn_version: z.string(),
  commit: z.string().nullable().describe("git commit of the checkout built, null without git"),
  built_at: z.string().describe("ISO time of the build"),
  deno: z.string().describe("Deno version that compiled it"),
  target: z.string().describe("target triple, e.g. x86_64-unknown-linux-gnu"),
  nats_server: z.strictObject({
    file: z.string().describe("its file name in EMBED_DIR"),
    version: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.int().nonnegative(),
  }).nullable().describe("the embedded nats-server, null when built without one"),
});
export type BuildManifest = z.infer<typeof BuildManifestSchema>;

/** The files a compiled stn carries: the directory they are in and the manifest describing them. */
export interface EmbeddedAssets {
  dir: string;
  manifest: BuildManifest;
}

/** EMBED_DIR as seen from a module of src/build (given by its URL): in a checkout or a compiled binary. */
export function embedDirFrom(moduleUrl: string): string {
  return fileURLToPath(new URL(`../../${EMBED_DIR}`, moduleUrl));
}

/** The assets staged in `dir` (a compiled binary's, or a layout a test or the compile script staged). */
export function assetsAt(dir: string): EmbeddedAssets {
  const manifest = BuildManifestSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, MANIFEST_FILE))));
  return { dir, manifest };
}

let cached: EmbeddedAssets | undefined;

/**
 * The running binary's embedded assets; undefined when stn runs from a checkout (`deno run`), which
 * keeps finding nats-server on the PATH and its version in git, even after a compile staged EMBED_DIR.
 */
export function embeddedAssets(): EmbeddedAssets | undefined {
  if (!Deno.build.standalone) return undefined;
  return cached ??= assetsAt(embedDirFrom(import.meta.url));
}
