import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { StationError } from "../errors.ts";

/** What was answered straight on a socket, outside any handler (a parse error, a timeout). */
const answered = new WeakMap<Socket, StationError>();

/** How long a socket answered and ended here may stay open for the client to read the answer. */
const LINGER_MS = 1_000;

/**
 * Answers a request node:http could not hand to a handler (or whose client was too slow) with the API's
 * error body, straight on the socket, then closes it: our side at once, the socket after LINGER_MS, so a
 * client that never reads or closes cannot keep it. The answer is remembered for the access log.
 */
export function answerOnSocket(socket: Socket, err: StationError): void {
  answered.set(socket, err);
  const body = JSON.stringify(err.toBody());
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${new TextEncoder().encode(body).length}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS);
}

/**
 * The answer a request really got when its body failed on the wire (malformed chunked framing: the 400
 * answered on its socket; a stalled body: the 408), or request_aborted when the client went away and nothing
 * could be sent. Undefined when the body did not fail — the handler's answer is the one sent.
 */
export function bodyFailure(c: Context): StationError | undefined {
  const incoming = (c.env as HttpBindings | undefined)?.incoming;
  if (!incoming || incoming.complete || !(incoming.destroyed || incoming.errored)) return undefined;
  return answered.get(incoming.socket) ??
    new StationError("request_aborted", "the client closed the connection before sending the whole body");
}
