/** Packing an environment's agents, MCP configs and workflows with a manifest (never variables.yml). */

import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import type { BundleManifest } from "../../contract/bundles.ts";
import { StationError } from "../../errors.ts";
import { formatBytes } from "../../files/size.ts";
import { VERSION } from "../../version.ts";
import { folderFiles } from "../files.ts";
import { type McpConfigFile, parseMcpConfig } from "../../environment_files/mcp_configs.ts";
import { neededVariables } from "../environments.ts";
import { requireEnvironment } from "../names.ts";
import { BUNDLE_LIMITS, bundledPath, MANIFEST } from "./layout.ts";
import { bundledAgents } from "./needs.ts";
import { archiveContents } from "./contents.ts";
import { refuseLiteralSecrets } from "./secret_scan.ts";

/** A packed bundle: the .tar.gz bytes, its manifest, and the folder's files it left out. */
export interface PackedBundle {
  bytes: Uint8Array;
  manifest: BundleManifest;
  left_out: string[];
}

export interface PackOptions {
  version?: string;
  description?: string;
  /** Fixed creation time (tests); default now. */
  now?: Date;
  /** The environment's MCP tools (exposed name → server) to check the agents' `tools` against. */
  knownTools?: ReadonlyMap<string, string>;
}

function tooLarge(message: string): StationError {
  return new StationError("bundle_too_large", message, {
    hint: `a bundle holds at most ${BUNDLE_LIMITS.maxEntries} files of ${
      formatBytes(BUNDLE_LIMITS.maxFileBytes)
    } each`,
  });
}

/** Packs an environment's agents, MCP configs and workflows with a manifest (never variables.yml). */
export async function packEnvironment(
  environmentsDir: string,
  name: string,
  options: PackOptions = {},
): Promise<PackedBundle> {
  const dir = await requireEnvironment(environmentsDir, name);
  const all = await folderFiles(dir);
  const chosen = all.filter((f) => bundledPath(f.path));
  if (chosen.length >= BUNDLE_LIMITS.maxEntries) {
    throw tooLarge(`${name} has ${chosen.length} files to bundle`);
  }
  const files: { path: string; bytes: Uint8Array }[] = [];
  const configs: McpConfigFile[] = [];
  for (const f of chosen) {
    if (f.size > BUNDLE_LIMITS.maxFileBytes) {
      throw tooLarge(`${f.path} is ${formatBytes(f.size)}, over ${formatBytes(BUNDLE_LIMITS.maxFileBytes)}`);
    }
    const bytes = await Deno.readFile(f.abs);
    files.push({ path: f.path, bytes });
    if (!f.path.startsWith("agents/") && !f.path.startsWith("workflows/")) {
      const text = new TextDecoder().decode(bytes);
      refuseLiteralSecrets(f.path, text);
      configs.push(parseMcpConfig(f.path, text));
    }
  }
  const archive = archiveContents(new Map(files.map((f) => [f.path, f.bytes])));
  const bundled = await bundledAgents(dir, name, options.knownTools);
  const created = options.now ?? new Date();
  const manifest: BundleManifest = {
    format: "stn-bundle/1",
    name,
    version: options.version ?? "1.0.0",
    ...(options.description ? { description: options.description } : {}),
    stn_version: VERSION,
    created_at: created.toISOString(),
    contents: archive.contents,
    variables: neededVariables(configs, {}, () => undefined).map(({ name, secret, used_by }) => ({
      name,
      secret,
      used_by,
    })),
    agents: bundled,
    mcp_servers: archive.mcp_servers,
    files: files.map((f) => ({
      path: f.path,
      size: f.bytes.length,
      sha256: createHash("sha256").update(f.bytes).digest("hex"),
    })),
  };
  const pack = tar.pack();
  const entry = (path: string, bytes: Uint8Array) =>
    pack.entry(
      { name: path, size: bytes.length, mode: 0o644, mtime: created, type: "file" },
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
  entry(MANIFEST, new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n"));
  for (const f of files) entry(f.path, f.bytes);
  pack.finalize();
  const chunks: Uint8Array[] = [];
  for await (const chunk of pack) chunks.push(chunk as Uint8Array);
  return {
    bytes: new Uint8Array(gzipSync(Buffer.concat(chunks))),
    manifest,
    left_out: all.filter((f) => !bundledPath(f.path)).map((f) => f.path),
  };
}
