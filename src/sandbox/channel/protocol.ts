import { Buffer } from "node:buffer";

/**
 * The sandbox channel's wire format (docs/sandbox_channel.md, v1): frames of `u32 n, u8 type, u32 id,
 * payload` in both directions, payloads made of big-endian fields. This module only encodes and decodes; what
 * a frame means is the client's business.
 */

// The largest frame stn accepts from the supervisor: DATA is at most LIMITS.max_data, an ENTRIES
// frame a little more; anything far bigger means the stream is not speaking this protocol.
const MAX_INCOMING = 4 * 1024 * 1024;

/** One decoded frame. */
export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

/** Builds a payload field by field. */
export class FieldWriter {
  readonly #parts: Buffer[] = [];

  /** Appends one byte. */
  u8(v: number): this {
    const b = Buffer.alloc(1);
    b.writeUInt8(v);
    this.#parts.push(b);
    return this;
  }

  /** Appends a big-endian u32. */
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    this.#parts.push(b);
    return this;
  }

  /** Appends a big-endian u64. */
  u64(v: number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(v));
    this.#parts.push(b);
    return this;
  }

  /** Appends a length-prefixed string (UTF-8) or byte string. */
  str(v: string | Uint8Array): this {
    const bytes = typeof v === "string" ? Buffer.from(v, "utf8") : Buffer.from(v);
    this.u32(bytes.length);
    this.#parts.push(bytes);
    return this;
  }

  /** The payload so far. */
  bytes(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

/** Reads a payload field by field; reading past its end throws (a malformed frame). */
export class FieldReader {
  readonly #buf: Buffer;
  #at = 0;

  constructor(buf: Buffer) {
    this.#buf = buf;
  }

  #take(n: number): number {
    if (this.#at + n > this.#buf.length) {
      throw new Error(`malformed frame: field past the end (${this.#at}+${n} > ${this.#buf.length})`);
    }
    const at = this.#at;
    this.#at += n;
    return at;
  }

  /** Whether every byte has been read. */
  get done(): boolean {
    return this.#at >= this.#buf.length;
  }

  u8(): number {
    return this.#buf.readUInt8(this.#take(1));
  }

  u32(): number {
    return this.#buf.readUInt32BE(this.#take(4));
  }

  i32(): number {
    return this.#buf.readInt32BE(this.#take(4));
  }

  u64(): number {
    return Number(this.#buf.readBigUInt64BE(this.#take(8)));
  }

  i64(): number {
    return Number(this.#buf.readBigInt64BE(this.#take(8)));
  }

  /** A length-prefixed string, decoded as UTF-8 (paths and messages). */
  str(): string {
    const n = this.u32();
    const at = this.#take(n);
    return this.#buf.toString("utf8", at, at + n);
  }
}

/** One frame's bytes: header and payload. */
export function encodeFrame(type: number, id: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32BE(5 + payload.length, 0);
  head.writeUInt8(type, 4);
  head.writeUInt32BE(id, 5);
  return payload.length === 0 ? head : Buffer.concat([head, payload]);
}

/**
 * Cuts a byte stream into frames. Chunks may split frames anywhere; push() returns the frames that
 * are complete and keeps the rest. A length that cannot be a frame throws (the stream is not this
 * protocol, or is corrupt, and the channel must be dropped).
 */
export class FrameDecoder {
  #pending: Buffer[] = [];
  #size = 0;

  /** Adds bytes; returns the frames they complete. */
  push(chunk: Buffer): Frame[] {
    this.#pending.push(chunk);
    this.#size += chunk.length;
    const frames: Frame[] = [];
    if (this.#size < 4) return frames;
    // A frame still arriving is joined once, when its last chunk is in (not once per chunk).
    const first = this.#pending[0];
    if (first.length >= 4 && this.#size < 4 + frameLength(first, 0)) return frames;
    let buf = this.#pending.length === 1 ? this.#pending[0] : Buffer.concat(this.#pending);
    let at = 0;
    while (buf.length - at >= 4) {
      const n = frameLength(buf, at);
      if (buf.length - at < 4 + n) break;
      frames.push({
        type: buf.readUInt8(at + 4),
        id: buf.readUInt32BE(at + 5),
        // A copy of small payloads only would save little; slices keep the big DATA frames uncopied.
        payload: buf.subarray(at + 9, at + 4 + n),
      });
      at += 4 + n;
    }
    buf = buf.subarray(at);
    this.#pending = buf.length > 0 ? [buf] : [];
    this.#size = buf.length;
    return frames;
  }
}

function frameLength(buf: Buffer, at: number): number {
  const n = buf.readUInt32BE(at);
  if (n < 5 || n > MAX_INCOMING) throw new Error(`malformed frame: length ${n}`);
  return n;
}
