import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  jetstream,
  type JetStreamClient,
  jetstreamManager,
  type JsMsg,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { headers, nanos, type NatsConnection } from "@nats-io/transport-node";

/**
 * The dispatch queue (DESIGN §4): one WorkQueue stream over `workflow.>` and one durable pull
 * consumer shared by every worker process. JetStream only carries "run this attempt now"; the
 * ledger decides whether the attempt still wants running.
 */

export const STREAM = "WORKFLOWS";
export const CONSUMER = "stn-workflow";
export const STEP_FILTER = "workflow.run.*.step.*.schedule";

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

/** Creates (or updates) the stream and the durable consumer. */
export async function provisionQueue(nc: NatsConnection, options: QueueOptions): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const stream = {
    name: STREAM,
    subjects: ["workflow.>"],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
  };
  try {
    await jsm.streams.info(STREAM);
  } catch {
    await jsm.streams.add(stream);
  }
  const consumer = {
    durable_name: CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: STEP_FILTER,
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: options.maxDeliver,
    max_ack_pending: options.maxAckPending,
  };
  try {
    await jsm.consumers.info(STREAM, CONSUMER);
    await jsm.consumers.update(STREAM, CONSUMER, {
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

/** Reads the durable consumer's counts. */
export async function queueInfo(nc: NatsConnection): Promise<QueueInfo> {
  const info = await (await jetstreamManager(nc)).consumers.info(STREAM, CONSUMER);
  return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
}

/** The subject of a step message (`workflow.run.<run>.step.<attempt id>.schedule`; paths may hold dots). */
export function stepSubject(m: StepMessage): string {
  return `workflow.run.${m.run}.step.${m.id}.schedule`;
}

/** Publishes step messages to the queue with the run's W3C traceparent header. */
export class Dispatcher {
  readonly js: JetStreamClient;

  constructor(nc: NatsConnection) {
    this.js = jetstream(nc);
  }

  /** Publishes one step message; resolves once JetStream stored it. */
  async publish(m: StepMessage, traceparent: string | null): Promise<void> {
    const h = headers();
    // The run's own span context, as stored: its step attempts are that span's children (docs/observability.md).
    if (traceparent) h.set("traceparent", traceparent);
    await this.js.publish(stepSubject(m), JSON.stringify(m), { headers: h });
  }

  /** Starts pulling messages; fn is called for each, at most `concurrency` at a time. */
  async consume(concurrency: number, fn: (msg: JsMsg) => Promise<void>): Promise<ConsumerMessages> {
    const consumer = await this.js.consumers.get(STREAM, CONSUMER);
    const messages = await consumer.consume({ max_messages: concurrency });
    let active = 0;
    let wake: (() => void) | undefined;
    (async () => {
      for await (const msg of messages) {
        while (active >= concurrency) await new Promise<void>((r) => (wake = r));
        active++;
        fn(msg).finally(() => {
          active--;
          wake?.();
          wake = undefined;
        });
      }
    })();
    return messages;
  }
}

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** A new W3C traceparent, continuing the trace of `parent` when one is given. */
export function newTraceparent(parent?: string | null): string {
  const m = parent ? /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(parent) : null;
  return `00-${m ? m[1] : hex(16)}-${hex(8)}-${m ? m[2] : "01"}`;
}
