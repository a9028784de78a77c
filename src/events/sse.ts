import type { Context } from "hono";
import { streamSSE } from "hono/streaming";

/**
 * Answers a run's events as Server-Sent Events, each with its seq as `id` (so Last-Event-ID resumes
 * the stream) and, when `named`, its type as `event`. `follow` gets a signal that aborts when the
 * client goes away or the station shuts down, so no reader outlives its connection.
 */
export function streamRunEvents<E extends { seq: number; type: string }>(
  c: Context,
  shutdown: AbortSignal,
  follow: (signal: AbortSignal) => AsyncIterable<E>,
  named = true,
): Response {
  return streamSSE(c, async (stream) => {
    const closed = new AbortController();
    stream.onAbort(() => closed.abort());
    for await (const e of follow(AbortSignal.any([closed.signal, shutdown]))) {
      const data = JSON.stringify(e);
      await stream.writeSSE(named ? { id: String(e.seq), event: e.type, data } : { id: String(e.seq), data });
    }
  });
}
