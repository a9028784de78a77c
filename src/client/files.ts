import { validateKey } from "../files/keys.ts";
import type { FileInfo, FileList, UploadResult } from "../files/store.ts";
import type { StationClient } from "./http.ts";

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

const enc = new TextEncoder();
const quoted = (s: string) => s.replace(/["\r\n\\]/g, (ch) => encodeURIComponent(ch));

/** Uploads a stream as multipart/form-data without buffering it (fields first, then the file part). */
export async function uploadFile(
  client: StationClient,
  body: ReadableStream<Uint8Array>,
  opts: UploadOptions = {},
): Promise<UploadResult> {
  const boundary = `stn-${crypto.randomUUID()}`;
  let head = "";
  const field = (name: string, value: string | undefined) => {
    if (value !== undefined) {
      head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    }
  };
  field("key", opts.key);
  field("ttl", opts.ttl);
  field("content_type", opts.contentType);
  field("metadata", opts.metadata ? JSON.stringify(opts.metadata) : undefined);
  const filename = opts.filename !== undefined ? `; filename="${quoted(opts.filename)}"` : "";
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"${filename}\r\n` +
    "Content-Type: application/octet-stream\r\n\r\n";
  const tail = `\r\n--${boundary}--\r\n`;

  const reader = body.getReader();
  let stage: "head" | "body" | "done" = "head";
  const multipart = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === "head") {
        stage = "body";
        return controller.enqueue(enc.encode(head));
      }
      if (stage === "done") return controller.close();
      const { done, value } = await reader.read();
      if (!done) return controller.enqueue(value);
      stage = "done";
      controller.enqueue(enc.encode(tail));
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });

  const headers: Record<string, string> = { "content-type": `multipart/form-data; boundary=${boundary}` };
  if (opts.size !== undefined) headers["x-file-size"] = String(opts.size);
  const res = await client.fetch("POST", "/api/v1/files", { body: multipart, headers });
  return await res.json() as UploadResult;
}

/** Starts a download: the response carries the bytes, Content-Length and X-Checksum-Sha256. */
export function downloadFile(client: StationClient, key: string): Promise<Response> {
  return client.fetch("GET", filePath(key));
}

/** A file's metadata. */
export function fileInfo(client: StationClient, key: string): Promise<FileInfo> {
  return client.json("GET", filePath(key), { query: { info: "" } });
}

/** One page of files under a prefix. */
export function listFiles(
  client: StationClient,
  query: { prefix?: string; limit?: number; cursor?: string } = {},
): Promise<FileList> {
  return client.json("GET", "/api/v1/files", { query });
}

/** Deletes a file. */
export async function deleteFile(client: StationClient, key: string): Promise<void> {
  await client.json("DELETE", filePath(key));
}
