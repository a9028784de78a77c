/**
 * Collects the dead buffers of a file transfer as it goes.
 *
 * Every chunk a transfer moves leaves garbage ArrayBuffers behind (a socket read, the NATS client's message
 * assembly) that nothing references once the chunk is written. V8 frees them only at a young-generation
 * collection, which it runs when its small JS new space fills, so at ~400 MB/s tens of MiB of dead buffers
 * pile up between two collections. stn runs with `--expose-gc` (src/build/stn_flags.ts) so that a transfer can
 * ask for a young-generation collection every few MiB: it costs well under a millisecond (the new space is
 * 1 MiB, `--max-semi-space-size=1`) and keeps a 1 GiB transfer's rise in RSS to a few tens of MiB without
 * `--optimize-for-size`, whose full collections halved download speed (docs/benchmarks.md, "Downloads").
 */

type Gc = (options: { type: "minor" }) => void;
const gc = (globalThis as { gc?: Gc }).gc;

/** Bytes moved between two young-generation collections. */
export const YOUNG_GC_EVERY_BYTES = 4 * 1024 * 1024;

/** Returns a counter to call with each chunk's size; it collects young garbage every YOUNG_GC_EVERY_BYTES. */
export function youngGcEvery(bytes = YOUNG_GC_EVERY_BYTES): (chunkBytes: number) => void {
  let since = 0;
  return (chunkBytes) => {
    since += chunkBytes;
    if (since < bytes) return;
    since = 0;
    gc?.({ type: "minor" });
  };
}
