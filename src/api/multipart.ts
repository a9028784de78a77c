/** A streaming multipart/form-data parser for file uploads: parts are read as they arrive, never buffered. */

import { StationError } from "../errors.ts";

/** One part of a multipart/form-data body; its bytes stream and must be read or cancelled before the next part. */
export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  body: ReadableStream<Uint8Array>;
}

const MAX_HEADER_BYTES = 16 * 1024;
const enc = new TextEncoder();

function malformed(why: string): StationError {
  return new StationError("invalid_request", `malformed multipart body: ${why}`, {
    status: 400,
    hint: "send multipart/form-data with a `file` part (curl -F file=@path), or PUT the raw bytes",
  });
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0];
  for (
    let i = hay.indexOf(first, from);
    i !== -1 && i + needle.length <= hay.length;
    i = hay.indexOf(first, i + 1)
  ) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/** The boundary of a multipart/form-data Content-Type, or null when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

function parseHeaders(text: string): Omit<Part, "body"> {
  let disposition = "";
  let contentType: string | undefined;
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") disposition = value;
    else if (name === "content-type") contentType = value;
  }
  const param = (p: string) => {
    const m = new RegExp(`;\\s*${p}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${p}=([^;]+)`, "i").exec(disposition);
    return m ? (m[1]?.replace(/\\(.)/g, "$1") ?? m[2].trim()) : undefined;
  };
  const name = param("name");
  if (!/^form-data/i.test(disposition) || name === undefined) throw malformed("a part has no form-data name");
  return { name, filename: param("filename"), contentType };
}

/**
 * Parses a multipart/form-data body as it arrives, without buffering parts: memory stays at about one
 * network chunk plus the boundary, whatever the size of the file part.
 */
export async function* multipartParts(
  body: ReadableStream<Uint8Array>,
  boundary: string,
): AsyncGenerator<Part> {
  const reader = body.getReader();
  let buf: Uint8Array = new Uint8Array(0);
  let eof = false;
  const read = async (): Promise<Uint8Array | null> => {
    if (eof) return null;
    const { done, value } = await reader.read();
    if (done) eof = true;
    return done ? null : value;
  };
  const more = async (): Promise<boolean> => {
    const value = await read();
    if (value === null) return false;
    buf = concat(buf, value);
    return true;
  };
  const need = async (n: number) => {
    while (buf.length < n) if (!(await more())) throw malformed("it ends early");
  };

  try {
    // The preamble runs up to the first "--boundary".
    const opening = enc.encode(`--${boundary}`);
    let at: number;
    while ((at = indexOf(buf, opening)) < 0) {
      if (!(await more())) throw malformed("no boundary found");
    }
    buf = buf.subarray(at + opening.length);
    const delimiter = enc.encode(`\r\n--${boundary}`);
    const headerEnd = enc.encode("\r\n\r\n");

    for (;;) {
      await need(2);
      if (buf[0] === 0x2d && buf[1] === 0x2d) return; // "--": the closing boundary
      let end: number;
      while ((end = indexOf(buf, headerEnd)) < 0) {
        if (buf.length > MAX_HEADER_BYTES) throw malformed("part headers are too long");
        if (!(await more())) throw malformed("it ends inside part headers");
      }
      const meta = parseHeaders(new TextDecoder().decode(buf.subarray(0, end)));
      buf = buf.subarray(end + headerEnd.length);

      let finished = false;
      // Pieces are views of the chunks read, not copies: every copy of an upload's bytes is garbage that
      // the collector has to chase, and that costs the server more CPU than the parsing itself.
      const nextPiece = async (): Promise<Uint8Array | null> => {
        for (;;) {
          if (finished) return null;
          const d = indexOf(buf, delimiter);
          if (d >= 0) {
            const piece = buf.subarray(0, d);
            buf = buf.subarray(d + delimiter.length);
            finished = true;
            return piece;
          }
          // Keep a tail that could be the start of the delimiter.
          const safe = buf.length - (delimiter.length - 1);
          if (safe > 0) {
            const piece = buf.subarray(0, safe);
            buf = buf.subarray(safe);
            return piece;
          }
          const value = await read();
          if (value === null) throw malformed("it ends inside a part");
          // When no delimiter can start in the tail, the tail is content and the new chunk is taken as it is;
          // only a chunk that might complete a delimiter begun in the tail is joined to it.
          const head = value.subarray(0, delimiter.length - 1);
          if (head.length === delimiter.length - 1 && indexOf(concat(buf, head), delimiter) < 0) {
            const piece = buf;
            buf = value;
            return piece;
          }
          buf = concat(buf, value);
        }
      };
      const partBody = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            // An empty piece enqueues nothing, and the stream would not pull again: read on until bytes or the end.
            for (;;) {
              const piece = await nextPiece();
              if (piece === null) return controller.close();
              if (piece.length > 0) return controller.enqueue(piece);
            }
          } catch (err) {
            controller.error(err);
          }
        },
      }, { highWaterMark: 0 });
      yield { ...meta, body: partBody };
      // Whatever the consumer left of this part is skipped.
      while (await nextPiece() !== null) { /* discard */ }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Reads a small text part whole (form fields), refusing more than maxBytes. */
export async function partText(part: Part, maxBytes = 64 * 1024): Promise<string> {
  let text = "";
  let size = 0;
  const decoder = new TextDecoder();
  for await (const chunk of part.body) {
    size += chunk.length;
    if (size > maxBytes) throw malformed(`field ${part.name} is over ${maxBytes} bytes`);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
