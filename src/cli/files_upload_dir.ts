/** `stn files upload DIR --recursive`: every regular file under a folder, from one process, several at a time. */

import { basename, join, relative, resolve, sep } from "node:path";
import { uploadFile } from "../client/files.ts";
import type { StationClient } from "../client/http.ts";
import { errorMessage, StationError } from "../errors.ts";
import { validateKey } from "../files/keys.ts";
import { formatBytes } from "../files/size.ts";
import { localFileError } from "./local_files.ts";

/** Options of uploadDir. */
export interface DirUploadOptions {
  /** Keys are this plus each file's path relative to the folder (default `files/<folder name>/`). */
  keyPrefix?: string;
  ttl?: string;
  contentType?: string;
  /** Uploads in flight at once. */
  concurrency: number;
}

/** One file of the folder. */
interface LocalFile {
  path: string;
  key: string;
  size: number;
}

/** What a recursive upload did: every file's key, and what failed (kept going past a failure). */
export interface DirUploadResult {
  key_prefix: string;
  uploaded: number;
  bytes: number;
  files: { path: string; file_key: string; size_bytes: number }[];
  failed: { path: string; code: string; message: string }[];
  /** Symlinks and special files, which are not followed or sent. */
  skipped: string[];
}

/** The default key prefix of a folder: `files/<its name>/`. */
export function defaultKeyPrefix(dir: string): string {
  return `files/${basename(resolve(dir))}/`;
}

/** Every regular file under dir (sorted by key), and the entries that are not regular files. */
async function walk(dir: string, prefix: string): Promise<{ files: LocalFile[]; skipped: string[] }> {
  const files: LocalFile[] = [];
  const skipped: string[] = [];
  const visit = async (folder: string) => {
    for await (const e of Deno.readDir(folder)) {
      const path = join(folder, e.name);
      if (e.isDirectory) await visit(path);
      else if (e.isFile) {
        const key = prefix + relative(dir, path).split(sep).join("/");
        files.push({ path, key: validateKey(key), size: (await Deno.stat(path)).size });
      } else skipped.push(path);
    }
  };
  try {
    await visit(dir);
  } catch (err) {
    throw localFileError(dir, err);
  }
  files.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { files, skipped };
}

/** Draws `label n/total files (bytes)` on stderr when it is a terminal, at most every 100 ms. */
function progressLine(total: number) {
  const show = Deno.stderr.isTerminal();
  const enc = new TextEncoder();
  let last = 0;
  return (done: number, bytes: number, final = false) => {
    if (!show || (!final && performance.now() - last < 100)) return;
    last = performance.now();
    const line = `\rupload ${done}/${total} files (${formatBytes(bytes)})\x1b[K${final ? "\n" : ""}`;
    Deno.stderr.writeSync(enc.encode(line));
  };
}

/** Uploads every regular file under dir, `concurrency` at a time; a failed file does not stop the others. */
export async function uploadDir(
  client: StationClient,
  dir: string,
  opts: DirUploadOptions,
): Promise<DirUploadResult> {
  const prefix = opts.keyPrefix ?? defaultKeyPrefix(dir);
  if (prefix !== "" && !prefix.endsWith("/")) validateKey(prefix);
  const { files, skipped } = await walk(dir, prefix);
  const result: DirUploadResult = {
    key_prefix: prefix,
    uploaded: 0,
    bytes: 0,
    files: [],
    failed: [],
    skipped,
  };
  const draw = progressLine(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const f = files[next++];
      try {
        const file = await Deno.open(f.path, { read: true }).catch((err) => {
          throw localFileError(f.path, err);
        });
        const r = await uploadFile(client, file.readable, {
          key: f.key,
          ttl: opts.ttl,
          contentType: opts.contentType,
          filename: basename(f.path),
          size: f.size,
        });
        result.files.push({ path: f.path, file_key: r.file_key, size_bytes: r.size_bytes });
        result.uploaded++;
        result.bytes += r.size_bytes;
      } catch (err) {
        const code = err instanceof StationError ? err.code : "upload_incomplete";
        result.failed.push({ path: f.path, code, message: errorMessage(err) });
      }
      draw(result.uploaded + result.failed.length, result.bytes);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, files.length)) }, worker));
  draw(result.uploaded + result.failed.length, result.bytes, true);
  result.files.sort((a, b) => (a.file_key < b.file_key ? -1 : 1));
  return result;
}
