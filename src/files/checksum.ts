import { createHash, type Hash } from "node:crypto";
import { hex } from "../lib/hex.ts";

/** A running SHA-256 over streamed bytes. */
export function sha256(): Hash {
  return createHash("sha256");
}

/** The object store's digest (`SHA-256=<base64url>`) as stn's checksum `sha256:<hex>`; null if it is not SHA-256. */
export function digestToChecksum(digest: string | undefined): string | null {
  if (!digest?.startsWith("SHA-256=")) return null;
  let b64 = digest.slice(8).replace(/-/g, "+").replace(/_/g, "/");
  while (b64.length % 4 !== 0) b64 += "=";
  try {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    if (bytes.length !== 32) return null;
    return "sha256:" + hex(bytes);
  } catch {
    return null;
  }
}
