import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { StationError } from "../errors.ts";
import { formatBytes } from "../files/size.ts";

/** Routes whose bodies are files: streamed to their store under its own limits, never buffered here. */
const FILE_BODIES = [/^\/api\/v1\/files(\/|$)/, /^\/api\/v1\/sandboxes\/[^/]+\/files\//];

/**
 * Refuses a JSON/YAML body over maxBytes with 413 body_too_large: by Content-Length before a byte is read,
 * and for a chunked body as soon as the bytes read pass the limit (at most maxBytes are ever held).
 */
export function requestBodyLimit(maxBytes: number): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new StationError("body_too_large", `the request body is over ${formatBytes(maxBytes)}`, {
        status: 413,
        hint: "send less (files go through /api/v1/files), or raise server.max_body_bytes on the server",
      });
    },
  });
  return (c, next) => FILE_BODIES.some((re) => re.test(c.req.path)) ? next() : limit(c, next);
}
