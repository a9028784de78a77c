/** Calls of /api/v1/files: uploads and downloads streamed, keys checked before they reach a URL. */

import type { FileInfo, FileList, PruneReport, UploadResult } from "../contract/files.ts";
import * as filesAnswers from "./answers/files.ts";
import { requireHeaderSafeType } from "../files/header_safe.ts";
import { validateKey } from "../files/keys.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import { parseAnswer, type StationClient } from "./http.ts";

/**
 * The API path of a key: each segment percent-encoded, "/" kept as the separator. The key is checked
 * first, because URL normalisation would silently resolve "." and ".." segments before the server sees them.
 */
export function filePath(key: string): string {
  validateKey(key);
  return "/api/v1/files/" + key.split("/").map(encodeURIComponent).join("/");
}

export interface UploadOptions {
  key?: string;
  /** A duration such as "24h"; "0" = never expires. */
  ttl?: string;
  contentType?: string;
  filename?: string;
  /** Size of the body when known, so the server can refuse an oversized file before it is sent. */
  size?: number;
  metadata?: Record<string, string>;
}

/**
 * Uploads a stream with `PUT /api/v1/files/<key>` (a new `files/f_<ULID>` key when none is given): the
 * body goes out chunked as it is read, never buffered, and the server stores it as fast as it arrives.
 */
export async function uploadFile(
  client: StationClient,
  body: ReadableStream<Uint8Array>,
  opts: UploadOptions = {},
): Promise<UploadResult> {
  // fetch() cannot send a header that is not bytes: refuse it here as the server would.
  const headers: Record<string, string> = {
    "content-type": requireHeaderSafeType(opts.contentType ?? "application/octet-stream"),
  };
  if (opts.size !== undefined) headers["x-file-size"] = String(opts.size);
  const path = filePath(
    opts.key ??
      (await lazyImport<typeof import("../files/new_key.ts")>("../files/new_key.ts", import.meta.url))
        .newFileKey(),
  );
  const res = await client.fetch("PUT", path, {
    body,
    headers,
    query: {
      ttl: opts.ttl,
      filename: opts.filename,
      metadata: opts.metadata ? JSON.stringify(opts.metadata) : undefined,
    },
  });
  return parseAnswer(filesAnswers.UploadResult, await res.json(), `PUT ${path}`);
}

/**
 * Starts a download: the response carries the bytes, Content-Length and X-Checksum-Sha256. With
 * `verifies`, the caller promises to check the bytes against X-Checksum-Sha256 and the server skips its own
 * SHA-256 pass; without it the server checks them and cuts the response off on a mismatch.
 */
export function downloadFile(
  client: StationClient,
  key: string,
  opts: { verifies?: boolean } = {},
): Promise<Response> {
  const headers: Record<string, string> = opts.verifies ? { "x-checksum-verify": "client" } : {};
  return client.fetch("GET", filePath(key), { headers });
}

/** A file's metadata. */
export function fileInfo(client: StationClient, key: string): Promise<FileInfo> {
  return client.json("GET", filePath(key), { query: { info: "" }, answer: filesAnswers.FileInfo });
}

/** One page of files under a prefix. */
export function listFiles(
  client: StationClient,
  query: { prefix?: string; limit?: number; cursor?: string } = {},
): Promise<FileList> {
  return client.json("GET", "/api/v1/files", { query, answer: filesAnswers.FileList });
}

/** Deletes a file. */
export async function deleteFile(client: StationClient, key: string): Promise<void> {
  await client.json("DELETE", filePath(key), { answer: filesAnswers.DeletedFile });
}

/** Deletes the expired files now (with dryRun only lists them). */
export function pruneFiles(client: StationClient, dryRun = false): Promise<PruneReport> {
  return client.json("POST", "/api/v1/files/prune", {
    query: { dry_run: String(dryRun) },
    answer: filesAnswers.PruneReport,
  });
}
