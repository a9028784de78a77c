import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import tar from "tar-stream";
import { BundleManifest, type BundleServer, type StationBundle } from "../../contract/bundles.ts";
import { errorMessage, StationError } from "../../errors.ts";
import { formatBytes } from "../../files/size.ts";
import { archiveContents, checkManifestContents } from "./contents.ts";
import { BUNDLE_LIMITS, bundledPath, MANIFEST, unsafeReason } from "./layout.ts";
import { convertStationBundle, isStationBundle } from "./station.ts";

/**
 * Reads a bundle into memory, refusing it at the first unsafe or malformed member: absolute paths, `..`,
 * links of any kind, devices, more members or bytes than the limits (the gunzipped size is capped while
 * it is inflated, so a gzip bomb stops early; each member's size is checked on its header), files outside the layout
 * (a bundle in Station's layout is read by station.ts instead, which names what it leaves out),
 * files whose size or SHA-256 differ from the manifest, and a manifest whose list of agents, MCP servers
 * or workflows is not what the files hold (contents.ts). Nothing is written: installing is a separate
 * step that only ever sees a bundle that passed every check.
 */

/** A bundle that passed every check. */
export interface ReadBundle {
  manifest: BundleManifest;
  files: Map<string, Uint8Array>;
  /** Its MCP servers with what each really launches, read from the configs. */
  servers: BundleServer[];
  /** Set for a bundle in Station's layout: what was converted and left out. */
  station?: StationBundle;
}

/** 400 `bundle_invalid` naming the member. */
function invalid(message: string, member?: string): StationError {
  return new StationError("bundle_invalid", message, {
    hint: "a bundle is a .tar.gz made by `stn bundle create` (plain files under agents/, mcp-configs/ and " +
      "workflows/, plus manifest.json with their checksums) or by Station's `stn bundle create`",
    details: member !== undefined ? { member } : undefined,
  });
}

function tooLarge(message: string, member?: string): StationError {
  return new StationError("bundle_too_large", message, {
    hint:
      `a bundle holds at most ${BUNDLE_LIMITS.maxEntries} members, ${
        formatBytes(BUNDLE_LIMITS.maxFileBytes)
      } ` +
      `each and ${formatBytes(BUNDLE_LIMITS.maxTotalBytes)} in all`,
    details: member !== undefined ? { member } : undefined,
  });
}

/** The tar stream inside the gzip, at most maxTotalBytes of it (a gzip bomb stops there). */
function gunzip(bytes: Uint8Array): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: BUNDLE_LIMITS.maxTotalBytes });
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw tooLarge(`the bundle unpacks to more than ${formatBytes(BUNDLE_LIMITS.maxTotalBytes)}`);
    }
    throw invalid(`the bundle is not valid gzip data: ${errorMessage(err)}`);
  }
}

const FILE_TYPES = new Set(["file", "contiguous-file"]);

/** The member's path without a leading `./`, refused when unsafe or of a type other than file or folder. */
function checkHeader(header: tar.Header, count: number): { path: string; folder: boolean } {
  const raw = header.name;
  const path = raw.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
  if (count > BUNDLE_LIMITS.maxEntries) {
    throw tooLarge(`the bundle has more than ${BUNDLE_LIMITS.maxEntries} members`);
  }
  const type = header.type ?? "file";
  if (type === "symlink" || type === "link") {
    throw invalid(
      `member ${raw} is a ${type === "link" ? "hard link" : "symlink"} (to ${header.linkname}); ` +
        "bundles carry plain files only",
      raw,
    );
  }
  if (type !== "directory" && !FILE_TYPES.has(type)) {
    throw invalid(`member ${raw} is a ${type}; bundles carry plain files only`, raw);
  }
  const why = unsafeReason(path);
  if (why) throw invalid(`member ${JSON.stringify(raw)} is ${why}`, raw);
  if ((header.size ?? 0) > BUNDLE_LIMITS.maxFileBytes) {
    throw tooLarge(
      `member ${raw} is ${formatBytes(header.size ?? 0)}, over ${formatBytes(BUNDLE_LIMITS.maxFileBytes)}`,
      raw,
    );
  }
  return { path, folder: type === "directory" };
}

/** Reads and verifies a bundle's bytes; throws `bundle_invalid` / `bundle_too_large` at the first problem. */
export async function readBundle(bytes: Uint8Array): Promise<ReadBundle> {
  if (bytes.length > BUNDLE_LIMITS.maxCompressedBytes) {
    throw tooLarge(
      `the bundle is ${formatBytes(bytes.length)}, over ${formatBytes(BUNDLE_LIMITS.maxCompressedBytes)}`,
    );
  }
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw invalid("the bundle is not gzip data");
  }
  const archive = gunzip(bytes);
  const files = new Map<string, Uint8Array>();
  const extract = tar.extract();
  extract.end(archive);
  let count = 0;
  try {
    for await (const entry of extract) {
      const { path, folder } = checkHeader(entry.header, ++count);
      const chunks: Uint8Array[] = [];
      for await (const chunk of entry) chunks.push(chunk as Uint8Array);
      if (folder) continue;
      if (files.has(path)) throw invalid(`member ${path} appears twice`, path);
      files.set(path, concat(chunks));
    }
  } catch (err) {
    extract.destroy();
    if (err instanceof StationError) throw err;
    throw invalid(`the bundle is not a readable tar archive: ${errorMessage(err)}`);
  }
  if (isStationBundle(files)) {
    const { manifest, files: converted, station } = convertStationBundle(files);
    return { manifest, files: converted, servers: archiveContents(converted).servers, station };
  }
  // stn's own layout: every member is one of its files (Station's carries others, left out above).
  for (const path of files.keys()) {
    if (path !== MANIFEST && !bundledPath(path)) {
      throw invalid(`member ${path} is not an agent, MCP config or workflow (nor manifest.json)`, path);
    }
  }
  const manifest = verifyManifest(files);
  const held = archiveContents(files);
  checkManifestContents(manifest, held);
  return { manifest, files, servers: held.servers };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, at), at += c.length;
  return out;
}

/** The manifest, checked against the members: every listed file present with its size and SHA-256, nothing else. */
function verifyManifest(files: Map<string, Uint8Array>): BundleManifest {
  const raw = files.get(MANIFEST);
  if (!raw) throw invalid("the bundle has no manifest.json");
  files.delete(MANIFEST);
  let manifest: BundleManifest;
  try {
    const parsed = BundleManifest.safeParse(JSON.parse(new TextDecoder().decode(raw)));
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw invalid(`manifest.json: /${i.path.join("/")}: ${i.message}`, MANIFEST);
    }
    manifest = parsed.data;
  } catch (err) {
    if (err instanceof StationError) throw err;
    throw invalid(`manifest.json is not valid JSON: ${errorMessage(err)}`, MANIFEST);
  }
  const listed = new Set<string>();
  for (const f of manifest.files) {
    if (!bundledPath(f.path)) {
      throw invalid(`manifest.json lists ${f.path}, which a bundle cannot carry`, f.path);
    }
    const bytes = files.get(f.path);
    if (!bytes) throw invalid(`manifest.json lists ${f.path}, which the bundle does not hold`, f.path);
    const sha = createHash("sha256").update(bytes).digest("hex");
    if (bytes.length !== f.size || sha !== f.sha256) {
      throw invalid(
        `${f.path} does not match its checksum in manifest.json (changed after packing?)`,
        f.path,
      );
    }
    listed.add(f.path);
  }
  for (const path of files.keys()) {
    if (!listed.has(path)) throw invalid(`member ${path} is not listed in manifest.json`, path);
  }
  return manifest;
}
