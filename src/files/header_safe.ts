/**
 * Whether a value can travel in an HTTP header as it is. Apart from src/files/content_type.ts, whose media
 * type table (Hono's) a client command that uploads nothing need not load (docs/benchmarks.md, startup).
 */

import { StationError } from "../errors.ts";

/** True when a value can travel in a header as it is: printable ASCII (HTTP header values are bytes). */
export function isHeaderSafe(value: string): boolean {
  return /^[\x20-\x7e]*$/.test(value);
}

/** Refuses a content type that cannot travel in a header as it is (HTTP header values are bytes). */
export function requireHeaderSafeType(value: string): string {
  if (isHeaderSafe(value)) return value;
  throw new StationError("invalid_request", `invalid content type ${JSON.stringify(value)}`, {
    hint: "a MIME type in printable ASCII, e.g. text/csv",
  });
}
