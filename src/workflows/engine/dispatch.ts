import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  type JetStreamClient,
  jetstreamManager,
  type JsMsg,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { headers, nanos, type NatsConnection } from "@nats-io/transport-node";
import { errorMessage, StationError } from "../../errors.ts";
import { within } from "../../lib/async.ts";
import { randomHex } from "../../lib/hex.ts";
import type { Slot, Slots } from "./slots.ts";

/**
 * The dispatch queue (docs/design/ledger-and-engine.md#the-ledger-is-the-source-of-truth): one WorkQueue
 * stream over `workflow.>` and, per task queue, one durable pull consumer shared by every process that serves
 * it (the station's local workers and `stn worker` processes). JetStream only carries "run this attempt now";
 * the ledger decides whether the attempt still wants running.
 */

export const STREAM = "WORKFLOWS";
export const CONSUMER = "stn-workflow";
export const STEP_FILTER = "workflow.run.*.step.*.schedule";
/** The queue of steps that name none (served by the station's local workers and by default by `stn worker`). */
export const DEFAULT_QUEUE = "default";

/** What a step message carries; `id` is the attempt row, the rest lets fencing cross-check it. */
export interface StepMessage {
  id: number;
  run: string;
  path: string;
  attempt: number;
}

export interface QueueOptions {
  ackWaitMs: number;
  maxDeliver: number;
  /** Messages pulled ahead of the worker pool (≥ the pool size). */
  maxAckPending: number;
}

/** The replicas the stream gets when nats.replicas is unset: 3 on a cluster, else 1. */
export function defaultReplicas(nc: NatsConnection): number {
  return nc.info?.cluster ? 3 : 1;
}

/** How long a step message may wait in the queue when engine.queue_max_age is not given. */
export const DEFAULT_QUEUE_MAX_AGE_MS = 7 * 86_400_000;

/**
 * Creates the stream with `replicas` copies and a MaxAge of `maxAgeMs` (or changes an existing stream's);
 * a cluster with fewer JetStream servers than that is a clear error, not a stream that silently has fewer
 * copies. MaxAge bounds what a queue nobody serves can pile up; the engine's sweep (timers.ts) re-sends
 * a scheduled step whose message aged out.
 */
export async function provisionStream(
  nc: NatsConnection,
  replicas: number,
  maxAgeMs = DEFAULT_QUEUE_MAX_AGE_MS,
): Promise<void> {
  // A cluster that is still forming has too few peers for a moment: only a lasting shortage is an error.
  for (const deadline = Date.now() + PLACEMENT_WAIT_MS;;) {
    try {
      return await placeStream(nc, replicas, maxAgeMs);
    } catch (err) {
      if (!/no suitable peers/i.test(errorMessage(err)) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const PLACEMENT_WAIT_MS = 5000;

async function placeStream(nc: NatsConnection, replicas: number, maxAgeMs: number): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const stream = {
    name: STREAM,
    subjects: ["workflow.>"],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: replicas,
    max_age: nanos(maxAgeMs),
  };
  try {
    let info;
    try {
      info = await jsm.streams.info(STREAM);
    } catch {
      await jsm.streams.add(stream);
      return;
    }
    if (info.config.num_replicas !== replicas || info.config.max_age !== stream.max_age) {
      await jsm.streams.update(STREAM, { ...info.config, num_replicas: replicas, max_age: stream.max_age });
    }
  } catch (err) {
    const message = errorMessage(err);
    if (!/replica|insufficient resources|cluster|peer/i.test(message)) throw err;
    throw new StationError(
      "nats_cluster_too_small",
      `NATS cannot keep ${replicas} replicas of the ${STREAM} stream: ${message}`,
      {
        hint: replicas > 1
          ? `set nats.replicas (STN_NATS_REPLICAS) to at most the number of JetStream servers in the cluster, ` +
            "or add servers (scripts/nats-cluster starts a 3-node cluster)"
          : "check the NATS server's JetStream settings",
        exitCode: 1,
      },
    );
  }
}

/** The durable consumer of a task queue (`default`: the steps that name none). */
export function consumerName(queue: string): string {
  return queue === DEFAULT_QUEUE ? CONSUMER : `stn-queue-${queue}`;
}

/** The subjects a task queue's steps are published on. */
export function queueFilter(queue: string): string {
  return queue === DEFAULT_QUEUE ? STEP_FILTER : `workflow.queue.${queue}.run.*.step.*.schedule`;
}

/**
 * Creates the stream's consumer of one task queue (the stream must exist), or updates its settings
 * unless `keep` (a worker leaves the station's settings of an existing consumer alone).
 */
export async function provisionQueue(
  nc: NatsConnection,
  options: QueueOptions,
  queue: string = DEFAULT_QUEUE,
  keep = false,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const name = consumerName(queue);
  const consumer = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: queueFilter(queue),
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: options.maxDeliver,
    max_ack_pending: options.maxAckPending,
  };
  try {
    await jsm.consumers.info(STREAM, name);
    if (keep) return;
    await jsm.consumers.update(STREAM, name, {
      ack_wait: consumer.ack_wait,
      max_deliver: consumer.max_deliver,
      max_ack_pending: consumer.max_ack_pending,
    });
  } catch {
    await jsm.consumers.add(STREAM, consumer);
  }
}

/** What the queue holds now. */
export interface QueueInfo {
  /** Messages not yet delivered. */
  pending: number;
  /** Delivered, not yet acknowledged. */
  ackPending: number;
  /** Delivered more than once and not yet acknowledged. */
  redelivered: number;
}

/** Reads the default queue's durable consumer's counts. */
export async function queueInfo(nc: NatsConnection): Promise<QueueInfo> {
  const info = await (await jetstreamManager(nc)).consumers.info(STREAM, consumerName(DEFAULT_QUEUE));
  return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
}

/**
 * The subject of a step message (`workflow.run.<run>.step.<attempt id>.schedule`, under
 * `workflow.queue.<queue>.` for a named task queue; paths may hold dots, so the attempt id stands in).
 */
export function stepSubject(m: StepMessage, queue: string = DEFAULT_QUEUE): string {
  const base = `run.${m.run}.step.${m.id}.schedule`;
  return queue === DEFAULT_QUEUE ? `workflow.${base}` : `workflow.queue.${queue}.${base}`;
}

/** Publishes step messages to the queue with the run's W3C traceparent header. */
export class Dispatcher {
  readonly js: JetStreamClient;

  constructor(nc: NatsConnection) {
    this.js = jetstream(nc);
  }

  /** Publishes one step message on its task queue; resolves once JetStream stored it. */
  async publish(m: StepMessage, traceparent: string | null, queue: string = DEFAULT_QUEUE): Promise<void> {
    const h = headers();
    // The run's own span context, as stored: its step attempts are that span's children (docs/observability.md).
    if (traceparent) h.set("traceparent", traceparent);
    await this.js.publish(stepSubject(m, queue), JSON.stringify(m), { headers: h });
  }

  /**
   * Starts pulling a task queue's messages; fn is called for each with a slot it holds until it frees it or
   * settles, so at most `slots.limit` run at a time (counting the steps claimed eagerly, which share them).
   * The result stops the pulling.
   */
  async consume(
    slots: Slots,
    fn: (msg: JsMsg, slot: Slot) => Promise<void>,
    queue: string = DEFAULT_QUEUE,
  ): Promise<{ close: () => Promise<void> }> {
    const consumer = await this.js.consumers.get(STREAM, consumerName(queue));
    // Short-lived pulls: one lost with a dying NATS node (or a consumer leader that moved) is replaced in seconds.
    const messages = await consumer.consume({ max_messages: slots.limit, expires: 5_000 });
    (async () => {
      for await (const msg of messages) {
        const slot = await slots.take();
        fn(msg, slot).finally(() => slot.free());
      }
    })();
    return {
      close: async () => {
        await messages.close().catch(() => {});
        // The server keeps the last pull waiting until it expires, though no one listens for it any more, and a
        // nats-server 2.9 that stops with a pull waiting sleeps 50 ms first (every one-shot paid it). Asking for
        // the consumer's info drops the pulls no one listens to (the unsubscribe went first on this connection).
        // Bounded: with the server unreachable, stopping must not wait for the request's own timeout.
        await within(consumer.info().catch(() => {}), 1_000, () => {});
      },
    };
  }
}

/** A new W3C traceparent, continuing the trace of `parent` when one is given. */
export function newTraceparent(parent?: string | null): string {
  const m = parent ? /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(parent) : null;
  return `00-${m ? m[1] : randomHex(16)}-${randomHex(8)}-${m ? m[2] : "01"}`;
}
