import { createHash, timingSafeEqual } from "node:crypto";

// Hashing first makes the comparison constant-time whatever the lengths.
function digest(s: string | Uint8Array): Uint8Array {
  return createHash("sha256").update(s).digest();
}

/** Compares a presented secret (token, signature) with the expected one in constant time. */
export function secretEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}
