import type { z } from "zod";
import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";
import { parseAnswer, type StationClient } from "./http.ts";

export type { EventSourceMessage } from "eventsource-parser/stream";

/** The messages of a Server-Sent Events body (any line ending: LF, CRLF or CR), as they arrive. */
export function sseMessages(body: ReadableStream<Uint8Array>): ReadableStream<EventSourceMessage> {
  return body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
}

/** How to follow a run's events: resume after a seq (or "now"); with follow false, end when caught up. */
export interface FollowEventsOptions {
  after?: number | "now";
  follow?: boolean;
  signal?: AbortSignal;
}

/**
 * GET `path`, a run's events route (workflow or agent run), as an async iterator of events checked
 * against `schema`; ends when the station ends the stream (after the run's terminal event).
 */
export async function* followRunEvents<T>(
  client: StationClient,
  path: string,
  schema: z.ZodType<T>,
  options: FollowEventsOptions = {},
): AsyncGenerator<T> {
  const res = await client.fetch("GET", path, {
    query: { after: options.after, follow: options.follow === false ? "false" : undefined },
    headers: { accept: "text/event-stream" },
    signal: options.signal,
  });
  for await (const message of sseMessages(res.body!)) {
    if (message.data) yield parseAnswer(schema, JSON.parse(message.data), `GET ${path}`);
  }
}
