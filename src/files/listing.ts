/**
 * Reading a bucket's objects: the latest meta entry of each, through a consumer deleted once read. The object
 * store's own list() watches through an ordered consumer that it leaves on the server for five minutes, one
 * more per call: a script's loop of `stn files list` (or the reaper's sweeps) piled them up in nats-server.
 */

import { AckPolicy, DeliverPolicy, type JetStreamClient } from "@nats-io/jetstream";

/** Meta entries fetched per request. */
const BATCH = 256;
/** How long nats-server keeps the consumer should this process die while reading (ns). */
const ORPHAN_NS = 60_000 * 1_000_000;

/** The latest meta entry of every object of the bucket (deleted ones included, as the store writes them). */
export async function latestEntries<T>(js: JetStreamClient, bucket: string): Promise<T[]> {
  const stream = `OBJ_${bucket}`;
  const jsm = await js.jetstreamManager(false); // no request: the bucket's stream is known to exist
  const created = await jsm.consumers.add(stream, {
    filter_subject: `$O.${bucket}.M.>`,
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.None,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: ORPHAN_NS,
  });
  try {
    const consumer = await js.consumers.get(stream, created.name);
    const entries: T[] = [];
    let left = created.num_pending;
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(BATCH, left), expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        got++, left--;
        entries.push(m.json<T>());
        if (left === 0) break;
      }
      if (got === 0) break; // the bucket changed while it was read: what was there is the answer
    }
    return entries;
  } finally {
    await jsm.consumers.delete(stream, created.name).catch(() => {});
  }
}
