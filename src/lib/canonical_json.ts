import { createHash } from "node:crypto";

/** Canonical JSON (sorted keys, undefined members left out) so a hash depends on content, not key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** The SHA-256 (hex) of a value's canonical JSON. */
export function contentHash(v: unknown): string {
  return createHash("sha256").update(canonicalJson(v)).digest("hex");
}
