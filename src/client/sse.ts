import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";

export type { EventSourceMessage } from "eventsource-parser/stream";

/** The messages of a Server-Sent Events body (any line ending: LF, CRLF or CR), as they arrive. */
export function sseMessages(body: ReadableStream<Uint8Array>): ReadableStream<EventSourceMessage> {
  return body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
}
