/** The contract of /api/v1/files: file metadata, lists and their queries. */

import { z } from "zod";

/** A stored file's metadata. */
export const FileInfo = z.looseObject({
  key: z.string(),
  size_bytes: z.number(),
  content_type: z.string(),
  checksum: z.string().describe("sha256:<hex> of the content"),
  created_at: z.string(),
  expires_at: z.string().nullable().describe(
    "when the file stops being served; null = never, or not before its session closes (expires_with_session)",
  ),
  expires_with_session: z.string().nullable().describe(
    "the sandbox session this file goes with: it expires storage.session_ttl after that session closes",
  ),
  filename: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
}).meta({ id: "FileInfo" });
export type FileInfo = z.infer<typeof FileInfo>;

export const FileList = z.looseObject({
  files: z.array(FileInfo),
  next_cursor: z.string().nullable().describe("pass as cursor for the next page; null on the last"),
}).meta({ id: "FileList" });
export type FileList = z.infer<typeof FileList>;

/** The answer to an upload. */
export const UploadResult = z.looseObject({
  file_key: z.string(),
  size_bytes: z.number(),
  content_type: z.string(),
  checksum: z.string(),
  expires_at: z.string().nullable(),
}).meta({ id: "UploadResult" });
export type UploadResult = z.infer<typeof UploadResult>;

/** POST /api/v1/files/prune: the expired files deleted (or, in a dry run, that would be). */
export const PruneReport = z.looseObject({
  dry_run: z.boolean(),
  files: z.array(
    z.looseObject({ key: z.string(), size_bytes: z.number(), expires_at: z.string().nullable() }),
  ),
  count: z.number(),
  bytes: z.number(),
}).meta({ id: "PruneReport" });
export type PruneReport = z.infer<typeof PruneReport>;

/** POST /api/v1/files/prune */
export const PruneQuery = z.object({
  dry_run: z.string().optional().describe("1 or true: only list the expired files, delete nothing"),
});

export const DeletedFile = z.looseObject({ deleted: z.string() }).meta({ id: "DeletedFile" });

/** GET /api/v1/files */
export const FileListQuery = z.object({
  prefix: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().optional(),
});
export type FileListQuery = z.input<typeof FileListQuery>;

/** PUT /api/v1/files/{key}: the options of a raw upload (checked by the route: `ttl` is a duration). */
export const PutFileQuery = z.object({
  ttl: z.string().optional().describe('a duration like "30s", "24h" or "7d"; 0 = never expires'),
  metadata: z.string().optional().describe('a JSON object of strings, e.g. {"owner":"ann"}'),
  filename: z.string().optional().describe("the file's original name (Content-Disposition of downloads)"),
});

/** GET /api/v1/files/{key}: `?info` answers the metadata as JSON instead of the bytes. */
export const GetFileQuery = z.object({ info: z.string().optional() });

/** Headers of a download: `X-Checksum-Verify: client` when the reader checks the bytes against the checksum. */
export const GetFileHeaders = z.object({
  "x-checksum-verify": z.enum(["client"]).optional().describe(
    "`client`: the reader checks the bytes against X-Checksum-Sha256 itself (as `stn files download` " +
      "does), so the server skips its own SHA-256 pass; without it the server checks and cuts the " +
      "response off on a mismatch",
  ),
});

/** The metadata of an upload: a JSON object of strings. */
export const FileMetadata = z.record(z.string(), z.string());

/** A file key in a path: the rest of the path, each segment percent-encoded. */
export const FileKeyParam = z.object({ key: z.string().describe("the key, e.g. files/data.csv") });
