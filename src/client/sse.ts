/**
 * Following a station's Server-Sent Events streams (a run's events, a sandbox command's output); the
 * stream parser itself (src/client/sse_messages.ts) is imported when a stream is first read.
 */

import { lazyImport } from "../lib/lazy_import.ts";
import { parseAnswer, type StationClient } from "./http.ts";
import type { EventSourceMessage } from "./sse_messages.ts";
import type { Answer } from "./answer.ts";

/** The messages of a Server-Sent Events body as they arrive (src/client/sse_messages.ts, loaded on first use). */
export async function sseMessages(
  body: ReadableStream<Uint8Array>,
): Promise<ReadableStream<EventSourceMessage>> {
  const parser = await lazyImport<typeof import("./sse_messages.ts")>("./sse_messages.ts", import.meta.url);
  return parser.sseMessages(body);
}

/** How to follow a run's events: resume after a seq (or "now"); with follow false, end when caught up. */
export interface FollowEventsOptions {
  after?: number | "now";
  follow?: boolean;
  signal?: AbortSignal;
}

/**
 * GET `path`, a run's events route (workflow or agent run), as an async iterator of events checked
 * against `answer`; ends when the station ends the stream (after the run's terminal event).
 */
export async function* followRunEvents<T>(
  client: StationClient,
  path: string,
  answer: Answer<T>,
  options: FollowEventsOptions = {},
): AsyncGenerator<T> {
  const res = await client.fetch("GET", path, {
    query: { after: options.after, follow: options.follow === false ? "false" : undefined },
    headers: { accept: "text/event-stream" },
    signal: options.signal,
  });
  for await (const message of await sseMessages(res.body!)) {
    if (message.data) yield parseAnswer(answer, JSON.parse(message.data), `GET ${path}`);
  }
}
