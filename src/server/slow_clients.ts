import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { StationError } from "../errors.ts";
import { answerOnSocket } from "./socket_answer.ts";

/** How long a client may take: server.header_timeout and server.body_idle_timeout (0 = no limit). */
export interface ClientTimeouts {
  /** Headers must be complete this long after the connection opened or the previous answer went out. */
  headerMs: number;
  /** A request body may go this long without a byte while the server waits for one. */
  bodyIdleMs: number;
}

/** The timeouts server.* configures. */
export function clientTimeouts(
  server: { header_timeout: number; body_idle_timeout: number },
): ClientTimeouts {
  return { headerMs: server.header_timeout, bodyIdleMs: server.body_idle_timeout };
}

/** What one connection is waiting for, and since when. */
interface Watch {
  /** head: the next request's headers; body: its body's next bytes; busy: the handler; closing: answered. */
  phase: "head" | "body" | "busy" | "closing";
  since: number;
  /** socket.bytesRead when `since` was set: a change means bytes arrived. */
  bytesRead: number;
  req?: IncomingMessage;
  res?: ServerResponse;
  /** The answer went out (maybe before the whole body came: listen() reads the rest). */
  answered?: boolean;
}

/**
 * Closes connections of clients too slow to send a request (slowloris), which node:http's headersTimeout
 * and requestTimeout do not do under Deno (measured: a connection with partial headers or a body that never
 * ends stays open). One timer looks at every connection's bytes read: headers not complete within headerMs
 * get a 408, and so does a body with no byte for bodyIdleMs while the server is ready to read one — a body
 * held back because the handler reads slowly (an upload streaming to a slower store) is never timed out.
 * Returns the function that stops the timer.
 */
export function guardSlowClients(server: Server, limits: ClientTimeouts): () => void {
  const watches = new Map<Socket, Watch>();
  const reset = (w: Watch, socket: Socket, phase: Watch["phase"]) => {
    w.phase = phase;
    w.since = Date.now();
    w.bytesRead = socket.bytesRead;
    if (phase === "head") w.req = w.res = undefined; // the next request's, once its headers are in
  };
  server.on("connection", (socket: Socket) => {
    watches.set(socket, { phase: "head", since: Date.now(), bytesRead: socket.bytesRead });
    socket.once("close", () => watches.delete(socket));
  });
  server.on("request", (req: IncomingMessage, res) => {
    const w = watches.get(req.socket as Socket);
    if (!w) return;
    w.req = req;
    w.res = res;
    w.answered = false;
    reset(w, req.socket as Socket, req.complete ? "busy" : "body");
    res.once("finish", () => {
      w.answered = true;
      if (w.phase === "busy") reset(w, req.socket as Socket, "head");
    });
  });

  const timeOut = (socket: Socket, w: Watch, message: string, limit: string) => {
    w.phase = "closing";
    // An answer already on its way (sent before the whole body came) cannot be followed by another.
    if (w.res?.headersSent) return void socket.destroy();
    answerOnSocket(
      socket,
      new StationError("request_timeout", message, {
        hint: `send the request without pauses; the limit is server.${limit}`,
      }),
    );
  };
  const check = () => {
    const now = Date.now();
    for (const [socket, w] of watches) {
      if (w.phase === "head" && limits.headerMs > 0 && now - w.since > limits.headerMs) {
        // Nothing read since the last answer: an idle kept-alive connection, closed without a word.
        if (socket.bytesRead === w.bytesRead) socket.destroy();
        else {timeOut(
            socket,
            w,
            `the request headers did not arrive within ${limits.headerMs} ms`,
            "header_timeout",
          );}
      } else if (w.phase === "body" && limits.bodyIdleMs > 0) {
        const req = w.req!;
        if (req.complete) reset(w, socket, w.answered ? "head" : "busy");
        else if (socket.bytesRead !== w.bytesRead || heldBack(socket, req)) reset(w, socket, "body");
        else if (now - w.since > limits.bodyIdleMs) {
          timeOut(
            socket,
            w,
            `the request body stopped for over ${limits.bodyIdleMs} ms`,
            "body_idle_timeout",
          );
        }
      }
    }
  };
  const shortest = Math.min(...[limits.headerMs, limits.bodyIdleMs].filter((ms) => ms > 0));
  if (!Number.isFinite(shortest)) return () => {};
  const timer = setInterval(check, Math.min(1_000, Math.max(50, shortest / 4)));
  return () => clearInterval(timer);
}

/** True when the server, not the client, is why no bytes come: the socket is paused or the body's buffer full. */
function heldBack(socket: Socket, req: IncomingMessage): boolean {
  return socket.isPaused() || req.readableLength >= req.readableHighWaterMark;
}
