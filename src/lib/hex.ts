/** Bytes as lowercase hex (digests, random tokens). */
export function hex(bytes: Uint8Array | ArrayBuffer): string {
  return Array.from(
    bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** n random bytes as hex (2n characters). */
export function randomHex(n: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(n)));
}
