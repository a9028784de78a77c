/** The request body limit (`server.max_body_bytes`): 413 before a byte too many is read. */

import type { MiddlewareHandler } from "hono";
import { StationError } from "../errors.ts";
import { formatBytes } from "../files/size.ts";

/** Routes whose bodies are files: read under their own limits (the store's, a bundle's), never buffered here. */
const FILE_BODIES = [
  /^\/api\/v1\/files(\/|$)/,
  /^\/api\/v1\/sandboxes\/[^/]+\/files\//,
  /^\/api\/v1\/bundles\/install$/,
];

function tooLarge(maxBytes: number): StationError {
  return new StationError("body_too_large", `the request body is over ${formatBytes(maxBytes)}`, {
    status: 413,
    hint: "send less (files go through /api/v1/files), or raise server.max_body_bytes on the server",
  });
}

/** Reads a body of at most maxBytes; throws 413 as soon as more arrives (the rest is never read). */
async function readLimited(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) bytes.set(chunk, at), at += chunk.length;
  return bytes;
}

/**
 * Refuses a JSON/YAML body over maxBytes with 413 body_too_large: by Content-Length before a byte is read,
 * and a body of unknown length (chunked) as soon as the bytes read pass the limit, so at most maxBytes are
 * ever held. (hono/body-limit does the same, but re-wraps the request in a way @hono/node-server's
 * request objects refuse.)
 */
export function requestBodyLimit(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (FILE_BODIES.some((re) => re.test(c.req.path)) || raw.method === "GET" || raw.method === "HEAD") {
      return next();
    }
    const declared = raw.headers.get("content-length");
    if (declared !== null && !raw.headers.has("transfer-encoding")) {
      if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
      return next();
    }
    if (!raw.body) return next();
    const body = await readLimited(raw.body, maxBytes);
    c.req.raw = new Request(raw.url, { method: raw.method, headers: raw.headers, body, signal: raw.signal });
    return next();
  };
}
