/** File keys: the rules a key obeys, and the object name it is stored under. */

import { StationError } from "../errors.ts";

/** Longest key accepted, in UTF-8 bytes (object names become subjects; keep them well under limits). */
export const MAX_KEY_BYTES = 512;

const SHORT_ID = /^f_[0-9A-HJKMNP-TV-Z]{26}$/;
/** The key a user means: a bare upload id `f_<ULID>` stands for `files/f_<ULID>`. */
export function resolveKey(key: string): string {
  return SHORT_ID.test(key) ? `files/${key}` : key;
}

function invalid(key: string, why: string): StationError {
  return new StationError("invalid_key", `invalid file key ${JSON.stringify(key)}: ${why}`, {
    status: 400,
    hint: "keys are relative paths like files/report.csv, runs/<run>/output/<name> or " +
      `sessions/<session>/<path>: no leading "/", no "." or ".." segments, no empty segments, ` +
      `no control characters, at most ${MAX_KEY_BYTES} bytes of UTF-8 (any Unicode letters are fine)`,
  });
}

/** Checks a key against the rules every stored key obeys; throws 400 invalid_key otherwise. */
export function validateKey(key: string): string {
  if (key.length === 0) throw invalid(key, "it is empty");
  if (!key.isWellFormed()) throw invalid(key, "it is not valid Unicode (a lone surrogate)");
  if (new TextEncoder().encode(key).length > MAX_KEY_BYTES) {
    throw invalid(key, `it is over ${MAX_KEY_BYTES} bytes`);
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(key)) throw invalid(key, "it contains a control character");
  if (key.includes("\\")) throw invalid(key, "it contains a backslash");
  if (key.startsWith("/")) throw invalid(key, "it is absolute");
  for (const segment of key.split("/")) {
    if (segment === "") throw invalid(key, "it has an empty segment (// or a trailing /)");
    if (segment === "." || segment === "..") throw invalid(key, `it has a "${segment}" segment`);
  }
  if (keyOfObjectName(key) !== key) {
    throw invalid(
      key,
      "it reads as the UTF-8 bytes of another key (mojibake), which the store cannot tell apart",
    );
  }
  return key;
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const BEYOND_LATIN1 = /[\u0100-\u{10ffff}]/u;

/**
 * The object store name a key is stored under. @nats-io/obj derives an object's subject with btoa(), which
 * takes only Latin-1: a key with a character beyond U+00FF is stored as its UTF-8 bytes, one character per
 * byte (so its subject is base64 of the UTF-8 bytes, as nats.go computes it). Every other key is its own
 * name, as it always was, so files stored before keep their names.
 */
export function objectName(key: string): string {
  if (!BEYOND_LATIN1.test(key)) return key;
  return String.fromCharCode(...utf8.encode(key));
}

/** The key an object store name stands for: the inverse of objectName (a name of UTF-8 bytes is decoded). */
export function keyOfObjectName(name: string): string {
  if (!/[\x80-\xff]/.test(name) || BEYOND_LATIN1.test(name)) return name;
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Uint8Array.from(name, (ch) => ch.charCodeAt(0)));
  } catch {
    return name; // Latin-1 text, not UTF-8 bytes
  }
  return BEYOND_LATIN1.test(decoded) ? decoded : name;
}

/** The last segment of a key, used as a download's default file name. */
export function keyBasename(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}
