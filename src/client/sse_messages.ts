/**
 * Reading a Server-Sent Events body. Its own module, imported when a stream is read: the parser package
 * costs a command ~14 ms to load, and most commands read no stream (docs/benchmarks.md, startup).
 */

import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";

export type { EventSourceMessage } from "eventsource-parser/stream";

/** The messages of a Server-Sent Events body (any line ending: LF, CRLF or CR), as they arrive. */
export function sseMessages(body: ReadableStream<Uint8Array>): ReadableStream<EventSourceMessage> {
  return body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
}
