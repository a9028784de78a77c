import type { JetStreamClient } from "@nats-io/jetstream";
import { StationError } from "../errors.ts";
import { sha256 } from "./checksum.ts";

/** Chunks queued ahead of the reader: with 128 KiB chunks this bounds a download's buffer to about 2 MiB. */
const BATCH = 16;

export interface ChunkSource {
  js: JetStreamClient;
  /** The bucket's backing stream, OBJ_<bucket>. */
  stream: string;
  /** The object's chunk subject, $O.<bucket>.C.<nuid>. */
  subject: string;
  chunks: number;
  /** Expected `sha256:<hex>` of the whole object; checked at the end of a full read. */
  checksum: string | null;
  /** Deliver only bytes [start, end] (inclusive); the checksum is not checked for partial reads. */
  range?: { start: number; end: number };
}

/**
 * Reads an object's chunks as a byte stream that fetches only as fast as it is consumed: unlike
 * ObjectStore.get (a push consumer that enqueues everything), memory stays bounded whatever the reader's speed.
 */
export function chunkStream(src: ChunkSource): ReadableStream<Uint8Array> {
  const iterator = chunks(src);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await iterator.return(undefined);
    },
  }, { highWaterMark: 0 });
}

/** A read that has seen no chunk for this long finds the object gone (deleted or replaced meanwhile). */
const STALL_MS = 10_000;

async function* chunks(src: ChunkSource): AsyncGenerator<Uint8Array> {
  if (src.chunks === 0) return;
  const consumer = await src.js.consumers.get(src.stream, { filter_subjects: src.subject });
  // consume(), not fetch() per batch: it asks for more while BATCH chunks are still queued, so the next
  // chunks are on their way while this one is written out (a fetch per batch stalled the stream for a
  // round trip every BATCH chunks); it still holds at most BATCH chunks whatever the reader's speed.
  const messages = await consumer.consume({ max_messages: BATCH, expires: STALL_MS });
  const iterator = messages[Symbol.asyncIterator]();
  const hash = src.range ? null : sha256();
  let offset = 0;
  let left = src.chunks;
  try {
    while (left > 0) {
      const next = await withStallTimeout(iterator.next());
      if (next.done) throw fileChanged();
      left--;
      const data = next.value.data;
      hash?.update(data);
      const from = offset;
      offset += data.length;
      if (!src.range) {
        if (data.length > 0) yield data;
      } else {
        const lo = Math.max(src.range.start, from) - from;
        const hi = Math.min(src.range.end + 1, offset) - from;
        if (hi > lo) yield data.subarray(lo, hi);
        if (offset > src.range.end) return;
      }
    }
    if (hash && src.checksum && `sha256:${hash.digest("hex")}` !== src.checksum) {
      throw new StationError("checksum_mismatch", "the stored file does not match its checksum", {
        status: 500,
      });
    }
  } finally {
    // stop(), not close(): close() resolves only once someone has iterated past the end, which a read
    // that stops at its last chunk (or its range) never does.
    messages.stop();
    await consumer.delete().catch(() => {});
  }
}

function fileChanged(): StationError {
  return new StationError("file_changed", "the file was deleted or replaced while it was being read", {
    status: 409,
  });
}

/** The next chunk, or file_changed when none comes within STALL_MS (its messages were purged). */
async function withStallTimeout<T>(next: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(fileChanged()), STALL_MS);
  });
  try {
    return await Promise.race([next, stalled]);
  } finally {
    clearTimeout(timer);
  }
}
