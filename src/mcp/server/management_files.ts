/** The management server's file tools: small files inline, larger ones through the HTTP API. */

import { Buffer } from "node:buffer";
import { z } from "zod";
import { deleteFile, downloadFile, fileInfo, listFiles, uploadFile } from "../../client/files.ts";
import type { StationClient } from "../../client/http.ts";
import { FileListQuery, FileMetadata, PutFileQuery } from "../../contract/files.ts";
import { StationError } from "../../errors.ts";
import { resolveKey } from "../../files/keys.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

/**
 * Largest file the MCP file tools move inline (text or base64 in one JSON-RPC message). Bigger files go
 * through the HTTP API or `stn files`, which stream.
 */
const MCP_FILE_LIMIT_BYTES = 1024 * 1024;

const tooLarge = (what: string, size: number) =>
  new StationError(
    "file_too_large",
    `${what} is ${size} bytes; MCP moves files up to ${MCP_FILE_LIMIT_BYTES} inline`,
    {
      hint: "use `stn files upload|download` or the HTTP API (/api/v1/files), which stream any size",
    },
  );

const Key = z.object({
  key: z.string().min(1).describe("the file key, e.g. files/data.csv (or an upload id f_…)"),
});

const UploadArgs = z.strictObject({
  key: z.string().min(1).optional().describe("key to store under (default: a new files/f_<ULID>)"),
  content: z.string().optional().describe("the file's text (stored as UTF-8)"),
  content_b64: z.string().optional().describe("or the file's bytes, base64"),
  content_type: z.string().optional().describe("MIME type (default: from the key's extension)"),
  ttl: PutFileQuery.shape.ttl,
  filename: PutFileQuery.shape.filename,
  metadata: FileMetadata.optional().describe('strings to keep with the file, e.g. {"owner":"ann"}'),
});

/** The bytes of an upload: exactly one of text and base64, within the inline limit. */
function uploadBytes(args: z.output<typeof UploadArgs>): Uint8Array<ArrayBuffer> {
  if ((args.content === undefined) === (args.content_b64 === undefined)) {
    throw new StationError("invalid_request", "give exactly one of content and content_b64", {
      hint: "content is text; content_b64 is any bytes, base64-encoded",
    });
  }
  const bytes = args.content !== undefined
    ? new TextEncoder().encode(args.content)
    : new Uint8Array(Buffer.from(args.content_b64!, "base64"));
  if (bytes.length > MCP_FILE_LIMIT_BYTES) throw tooLarge("the upload", bytes.length);
  return bytes;
}

/** Text when the bytes are UTF-8, else base64. */
function inlineContent(bytes: Uint8Array): { content: string } | { content_b64: string } {
  try {
    return { content: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { content_b64: Buffer.from(bytes).toString("base64") };
  }
}

/** The file tools of the management server. */
export function fileTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "list_files",
      "List stored files under a prefix, a page at a time (key, size, type, checksum, expiry).",
      FileListQuery,
      (q) => listFiles(client, q),
    ),
    zodTool("get_file_info", "A stored file's metadata.", Key, (a) => fileInfo(client, resolveKey(a.key))),
    zodTool("delete_file", "Delete a stored file.", Key, async (a) => {
      const key = resolveKey(a.key);
      await deleteFile(client, key);
      return { deleted: key };
    }),
    zodTool(
      "upload_file",
      `Store a file from text (content) or base64 (content_b64), up to ${MCP_FILE_LIMIT_BYTES} bytes; ` +
        "returns its file_key for workflows and sandboxes.",
      UploadArgs,
      (a) => {
        const bytes = uploadBytes(a);
        return uploadFile(client, new Blob([bytes]).stream(), {
          key: a.key,
          ttl: a.ttl,
          filename: a.filename,
          contentType: a.content_type,
          metadata: a.metadata,
          size: bytes.length,
        });
      },
    ),
    zodTool(
      "download_file",
      `Read a stored file up to ${MCP_FILE_LIMIT_BYTES} bytes: text as content, other bytes as content_b64.`,
      Key,
      async (a) => {
        const key = resolveKey(a.key);
        const info = await fileInfo(client, key);
        if (info.size_bytes > MCP_FILE_LIMIT_BYTES) throw tooLarge(`file ${key}`, info.size_bytes);
        const res = await downloadFile(client, key);
        const bytes = new Uint8Array(await res.arrayBuffer());
        return { key, size_bytes: bytes.length, content_type: info.content_type, ...inlineContent(bytes) };
      },
    ),
  ];
}
