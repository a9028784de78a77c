/** Reading an object's chunks as a byte stream that fetches only as fast as it is consumed. */

import type { JetStreamClient } from "@nats-io/jetstream";
import { StationError } from "../errors.ts";
import { youngGcEvery } from "../lib/young_gc.ts";
import { sha256 } from "./checksum.ts";

/** Chunks fetched per pull: with 128 KiB chunks this bounds a download's buffer to about 2 MiB. */
const BATCH = 16;

export interface ChunkSource {
  js: JetStreamClient;
  /** The bucket's backing stream, OBJ_<bucket>. */
  stream: string;
  /** The object's chunk subject, $O.<bucket>.C.<nuid>. */
  subject: string;
  chunks: number;
  /** Expected `sha256:<hex>` of the whole object, checked before a full read's last chunk; null = not checked. */
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

async function* chunks(src: ChunkSource): AsyncGenerator<Uint8Array> {
  if (src.chunks === 0) return;
  const consumer = await src.js.consumers.get(src.stream, { filter_subjects: src.subject });
  const hash = src.range || !src.checksum ? null : sha256();
  const collect = youngGcEvery();
  let offset = 0;
  let left = src.chunks;
  try {
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(BATCH, left), expires: 10_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        left--;
        const data = m.data;
        hash?.update(data);
        collect(data.length);
        // Checked before the last bytes go out, so that on a mismatch the response is cut short: a reader
        // that does not check the digest itself (curl) never gets a complete-looking damaged file.
        if (hash && left === 0 && `sha256:${hash.digest("hex")}` !== src.checksum) {
          throw new StationError("checksum_mismatch", "the stored file does not match its checksum", {
            status: 500,
          });
        }
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
        if (left === 0) break;
      }
      if (got === 0) {
        throw new StationError("file_changed", "the file was deleted or replaced while it was being read", {
          status: 409,
        });
      }
    }
  } finally {
    await consumer.delete().catch(() => {});
  }
}
