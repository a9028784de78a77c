import type { EventStore, JsonRpcMessage } from "./sdk.ts";

/**
 * One session's recent SSE events, so a client whose stream broke (or was closed for polling) resumes
 * with Last-Event-ID instead of losing a tool's answer. Bounded: the oldest events go first.
 */
export class SessionEvents implements EventStore {
  #events: { id: string; stream: string; message: JsonRpcMessage }[] = [];
  #seq = 0;

  constructor(private readonly keep = 200) {}

  /** Stores an event of a stream and returns its id (`<stream>_<seq>`). */
  storeEvent(stream: string, message: JsonRpcMessage): Promise<string> {
    const id = `${stream}_${++this.#seq}`;
    this.#events.push({ id, stream, message });
    if (this.#events.length > this.keep) this.#events.shift();
    return Promise.resolve(id);
  }

  /** Sends the events of the same stream after lastEventId; answers that stream's id. */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JsonRpcMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.#events.findIndex((e) => e.id === lastEventId);
    const stream = at >= 0 ? this.#events[at].stream : lastEventId.slice(0, lastEventId.lastIndexOf("_"));
    for (const e of this.#events.slice(at + 1)) {
      // A priming event's message is empty: nothing to resend.
      if (e.stream === stream && Object.keys(e.message).length > 0) await send(e.id, e.message);
    }
    return stream;
  }
}
