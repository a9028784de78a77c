/** /api/v1/files: upload, download (ranges), list, stat and delete stored files, streamed both ways. */

import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  DeletedFile,
  FileInfo as FileInfoSchema,
  FileKeyParam,
  FileList,
  FileListQuery,
  FileMetadata,
  GetFileHeaders,
  GetFileQuery,
  PruneQuery,
  PruneReport,
  PutFileQuery,
  UploadResult,
} from "../../contract/files.ts";
import { StationError } from "../../errors.ts";
import { keyBasename, resolveKey, validateKey } from "../../files/keys.ts";
import { newFileKey } from "../../files/new_key.ts";
import { contentTypeFor } from "../../files/content_type.ts";
import { isHeaderSafe, requireHeaderSafeType } from "../../files/header_safe.ts";
import { type FileInfo, type PutOptions, uploadResult } from "../../files/store.ts";
import { parseDuration } from "../../lib/duration.ts";
import type { StationContext } from "../../context.ts";
import { multipartBoundary, multipartParts, partText } from "../multipart.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { parseWith } from "../../lib/parse.ts";

/** The key addressed by /api/v1/files/<key…>: the rest of the raw path, percent-decoded (keys contain "/"). */
function pathKey(c: Context): string {
  const path = new URL(c.req.url).pathname;
  const raw = path.slice(path.indexOf("/files/") + "/files/".length);
  let key: string;
  try {
    key = decodeURIComponent(raw);
  } catch {
    throw new StationError(
      "invalid_key",
      `invalid file key: bad percent-encoding in ${JSON.stringify(raw)}`,
      {
        status: 400,
        hint: "percent-encode each key segment (encodeURIComponent)",
      },
    );
  }
  return validateKey(resolveKey(key));
}

/** Longest ttl accepted (about 100 years); much longer ones have no representable expiry date. */
const MAX_TTL_MS = 36_500 * 86_400_000;

function ttlOption(value: string | undefined | null): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const ms = parseDuration(value);
  if (ms === null || ms > MAX_TTL_MS) {
    throw new StationError("invalid_request", `invalid ttl ${JSON.stringify(value)}`, {
      status: 400,
      hint: 'a duration like "30s", "24h" or "7d", at most 36500d; 0 = never expires',
    });
  }
  return ms;
}

function metadataOption(value: string | undefined | null): Record<string, string> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new StationError("invalid_request", "metadata is not valid JSON", {
      status: 400,
      hint: 'metadata is a JSON object of strings, e.g. {"owner":"ann"}',
    });
  }
  return parseWith(FileMetadata, parsed, "metadata");
}

function sizeHint(value: string | undefined): number | undefined {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** A sent Content-Type worth keeping: the generic octet-stream says nothing, so the name decides instead. */
function sentType(value: string | undefined): string | undefined {
  if (value) requireHeaderSafeType(value);
  return value && !/^application\/octet-stream\b/i.test(value) ? value : undefined;
}

/** RFC 8187 value-chars: percent-encodes everything but attr-char (encodeURIComponent leaves '()* alone). */
function rfc8187(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (ch) => "%" + ch.charCodeAt(0).toString(16).toUpperCase(),
  );
}

/**
 * Content-Disposition for a download (RFC 6266): `filename*` carries the exact name in UTF-8, `filename` an
 * ASCII stand-in for old clients. Header values are bytes, so a non-ASCII name may not appear raw.
 */
function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${rfc8187(name)}`;
}

function fileHeaders(info: FileInfo): Record<string, string> {
  const hex = info.checksum.replace(/^sha256:/, "");
  const name = info.filename || keyBasename(info.key);
  const h: Record<string, string> = {
    // A type stored before types were checked may not fit in a header; the name's type stands in.
    "content-type": isHeaderSafe(info.content_type) ? info.content_type : contentTypeFor(name),
    "accept-ranges": "bytes",
    "last-modified": new Date(info.created_at).toUTCString(),
    "content-disposition": contentDisposition(name),
  };
  if (hex) {
    h["etag"] = `"${hex}"`;
    h["x-checksum-sha256"] = hex;
  }
  if (info.expires_at) h["x-expires-at"] = info.expires_at;
  return h;
}

/** A single `bytes=` range of a file of size bytes; null = serve it all; throws 416 when unsatisfiable. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null; // multiple or malformed ranges: RFC 9110 lets us ignore them
  let start: number, end: number;
  if (m[1] === "") {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) {
    throw new StationError("range_not_satisfiable", `range ${header} is outside the file (${size} bytes)`, {
      status: 416,
      details: { size_bytes: size },
    });
  }
  return { start, end };
}

const tags = ["files"];
const byKey = { params: FileKeyParam };
// Keys contain "/": the documented {key} is the rest of the path, so the routes match /* (see pathKey).
const wildcard = { path: "/*" };
const bytes = (description: string) => ({
  description,
  content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
});

const listFiles = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List files under a prefix, a page at a time",
  request: { query: FileListQuery },
  responses: { 200: json(FileList, "one page of files"), ...errors("invalid_request") },
});
const postFile = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Upload a file as multipart/form-data (fields key, ttl, metadata, content_type, then file)",
  request: {
    body: {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object" as const,
            properties: {
              key: { type: "string" as const },
              ttl: { type: "string" as const },
              metadata: { type: "string" as const, description: "a JSON object of strings" },
              content_type: { type: "string" as const },
              file: { type: "string" as const, format: "binary" },
            },
            required: ["file"],
          },
        },
      },
    },
  },
  responses: {
    201: json(UploadResult, "stored"),
    ...errors("invalid_request", "invalid_key", "file_required", "file_too_large", "storage_quota_exceeded"),
  },
});
const putFile = createRoute({
  method: "put",
  path: "/{key}",
  tags,
  summary: "Upload the raw body as a file (curl -T); streamed, never buffered",
  request: { ...byKey, query: PutFileQuery, body: { required: true, ...bytes("the file's bytes") } },
  responses: {
    201: json(UploadResult, "stored"),
    ...errors("invalid_request", "invalid_key", "file_too_large", "storage_quota_exceeded"),
  },
});
const getFile = createRoute({
  method: "get",
  path: "/{key}",
  tags,
  summary: "Download a file (Range supported), or with ?info its metadata as JSON",
  request: { ...byKey, query: GetFileQuery, headers: GetFileHeaders },
  responses: {
    200: {
      description:
        "the bytes (or, with ?info, the FileInfo JSON); ETag and X-Checksum-Sha256 carry the digest",
      content: {
        "application/octet-stream": { schema: { type: "string" as const, format: "binary" } },
        "application/json": { schema: FileInfoSchema },
      },
    },
    206: bytes("the asked range"),
    ...errors("invalid_key", "file_not_found", "range_not_satisfiable"),
  },
});
const headFile = createRoute({
  method: "head",
  path: "/{key}",
  tags,
  summary: "A file's headers (size, type, checksum) without its bytes",
  request: byKey,
  responses: { 200: { description: "the headers a GET would send" }, 404: { description: "no such file" } },
});
const deleteFile = createRoute({
  method: "delete",
  path: "/{key}",
  tags,
  summary: "Delete a file",
  request: byKey,
  responses: { 200: json(DeletedFile, "deleted"), ...errors("invalid_key", "file_not_found") },
});

const pruneFiles = createRoute({
  method: "post",
  path: "/prune",
  tags,
  summary: "Delete the expired files now, as the reaper does (dry_run: only list them)",
  request: { query: PruneQuery },
  responses: { 200: json(PruneReport, "the expired files, deleted unless a dry run") },
});

/** /api/v1/files: upload (multipart POST or raw PUT), download, HEAD, list, delete and prune of stored files. */
export function filesRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const files = () => ctx.files;

  openapi(app, listFiles, async (c) => c.json(await files().list(c.req.valid("query")), 200));
  openapi(app, pruneFiles, async (c) => {
    const dryRun = /^(1|true)$/i.test(c.req.valid("query").dry_run ?? "");
    return c.json(await ctx.fileReaper.prune({ dryRun }), 200);
  });

  openapi(app, postFile, async (c) => {
    const boundary = multipartBoundary(c.req.header("content-type"));
    const body = c.req.raw.body;
    if (!boundary || !body) {
      throw new StationError("invalid_request", "POST /api/v1/files takes a multipart/form-data body", {
        status: 400,
        hint: "curl -F file=@data.csv …, or PUT /api/v1/files/<key> with the raw bytes (curl -T)",
      });
    }
    const fields: Record<string, string> = {};
    let stored: FileInfo | undefined;
    for await (const part of multipartParts(body, boundary)) {
      if (part.name !== "file") {
        if (stored) {
          await files().delete(stored.key).catch(() => {});
          throw new StationError("invalid_request", `field ${part.name} came after the file part`, {
            status: 400,
            hint: "send key, ttl and metadata before the file part; the upload was discarded",
          });
        }
        fields[part.name] = await partText(part);
        continue;
      }
      if (stored) throw new StationError("invalid_request", "only one file part per upload", { status: 400 });
      const key = fields.key ? validateKey(fields.key) : newFileKey();
      const opts: PutOptions = {
        ttlMs: ttlOption(fields.ttl),
        metadata: metadataOption(fields.metadata),
        contentType: sentType(fields.content_type) ?? sentType(part.contentType),
        filename: part.filename || undefined,
        size: sizeHint(c.req.header("x-file-size")),
      };
      stored = await files().put(key, part.body, opts);
    }
    if (!stored) {
      throw new StationError("file_required", "the upload has no `file` part", {
        status: 400,
        hint: "curl -F file=@data.csv http://…/api/v1/files",
      });
    }
    return c.json(uploadResult(stored), 201);
  }, { body: "raw" });

  openapi(app, putFile, async (c) => {
    const key = pathKey(c);
    const q = c.req.valid("query");
    const body = c.req.raw.body ?? new ReadableStream<Uint8Array>({ start: (ctl) => ctl.close() });
    const info = await files().put(key, body, {
      ttlMs: ttlOption(q.ttl),
      metadata: metadataOption(q.metadata),
      contentType: sentType(c.req.header("content-type")),
      filename: q.filename || undefined,
      size: sizeHint(c.req.header("content-length")) ?? sizeHint(c.req.header("x-file-size")),
    });
    return c.json(uploadResult(info), 201);
  }, { ...wildcard, body: "raw" });

  // GET also answers HEAD (Hono routes HEAD to GET); HEAD must not open the object's stream.
  app.openAPIRegistry.registerPath(headFile);
  openapi(app, getFile, async (c) => {
    const key = pathKey(c);
    if (c.req.valid("query").info !== undefined) return c.json(await files().head(key), 200);
    if (c.req.raw.method === "HEAD") {
      const info = await files().head(key);
      return c.body(null, 200, { ...fileHeaders(info), "content-length": String(info.size_bytes) });
    }
    const head = await files().head(key);
    const range = parseRange(c.req.header("range"), head.size_bytes);
    const clientVerifies = c.req.valid("header")["x-checksum-verify"] === "client";
    const { info, stream } = await files().get(key, range ?? undefined, { clientVerifies });
    const headers = fileHeaders(info);
    if (range) {
      headers["content-range"] = `bytes ${range.start}-${range.end}/${info.size_bytes}`;
      headers["content-length"] = String(range.end - range.start + 1);
      return c.body(stream, 206, headers);
    }
    headers["content-length"] = String(info.size_bytes);
    return c.body(stream, 200, headers);
  }, wildcard);

  openapi(app, deleteFile, async (c) => {
    const key = pathKey(c);
    await files().delete(key);
    return c.json({ deleted: key }, 200);
  }, wildcard);

  return app;
}
