/** Serving the Hono app over node:http (bounded memory for streamed bodies), and closing it. */

import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import type { AddressInfo, Socket } from "node:net";
import type { IncomingMessage, Server } from "node:http";
import type { ErrorCode } from "../error_codes.ts";
import { StationError } from "../errors.ts";
import { type ClientTimeouts, guardSlowClients } from "./slow_clients.ts";
import { answerOnSocket } from "./socket_answer.ts";

/** A listening HTTP server. */
export interface Listener {
  /** The port it listens on (the one chosen by the OS when 0 was asked for). */
  port: number;
  /** Stops accepting, lets requests in flight finish, then closes every connection. */
  close(): Promise<void>;
}

/** A fetch handler; `env` carries node:http's request and response (Hono apps see it as `c.env`). */
export type SocketFetch = (req: Request, env: HttpBindings) => Response | Promise<Response>;

/**
 * Serves fetch on host:port over node:http.
 *
 * Not Deno.serve: its HTTP/1 server keeps reading a chunked request body into memory while the handler
 * is busy between reads, so a fast client uploading to a slower object store grew the server by most of
 * the file (measured: +110 MiB for 256 MiB in 64 KiB chunks, which is how fetch() sends a stream).
 * node:http pauses the socket instead, so an upload is held back to the speed it is stored at.
 */
export async function listen(
  fetch: SocketFetch,
  host: string,
  port: number,
  timeouts: ClientTimeouts,
): Promise<Listener> {
  const server = createAdaptorServer({
    // Only HTTP/1 is served here (createServer), so the bindings are node:http's.
    fetch: (req: Request, env) => answerAfterBody(fetch, req, env as HttpBindings),
    hostname: host,
    overrideGlobalObjects: false,
    // A request without Host reaches the app, whose host rule answers it with the API's error body
    // (node:http's own refusal is a bare 400).
    serverOptions: { requireHostHeader: false },
  }) as Server;
  server.on("clientError", answerClientError);
  const unguard = guardSlowClients(server, timeouts);
  // server.close() waits for every connection to go away, and closeIdleConnections() misses some idle
  // keep-alive ones (seen: the one an SSE client read a run's events on), so an embedded command sat
  // minutes after its work. Requests in flight may finish; then every connection is closed, as
  // Deno.serve's shutdown() did.
  let inFlight = 0;
  server.on("request", (_req, res) => {
    inFlight++;
    res.once("close", () => {
      if (--inFlight === 0 && !server.listening) server.closeAllConnections();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(err, host, port)));
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        unguard();
        server.close(() => resolve());
        if (inFlight === 0) server.closeAllConnections();
        else server.closeIdleConnections();
      }),
  };
}

/** Most of an unread request body read (and dropped) before an error answer; more is answered at once. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
/** A client that sends nothing for this long while its body is drained is answered anyway. */
const DRAIN_IDLE_MS = 2_000;
/** How long a connection answered while its client still sends is kept, dropping what arrives, before it closes. */
const LINGER_MS = 2_000;

/**
 * Runs the handler; when it refused a request without reading all of its body (a 413, a 507 by the declared
 * size), the rest is read and dropped first, up to DRAIN_LIMIT_BYTES. A client that writes its whole body
 * before reading (most do) otherwise has its connection reset under it and never sees the answer. A body
 * past the limit is answered at once with `Connection: close`.
 */
async function answerAfterBody(
  fetch: SocketFetch,
  req: Request,
  env: HttpBindings,
): Promise<Response> {
  const res = await fetch(req, env);
  const { incoming } = env;
  if (res.status < 400 || !incoming || incoming.complete || incoming.destroyed) return res;
  if (await discardRest(incoming)) return res;
  lingerAfterAnswer(incoming);
  const headers = new Headers(res.headers);
  headers.set("connection", "close");
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * Closes a connection whose client is still sending only once it has had time to read the answer. node:http
 * destroys the socket as soon as a `Connection: close` answer is written; with the client's bytes unread, the
 * kernel then resets the connection, and a client that was busy writing loses the answer it had not read yet
 * (seen: 2 of 15 runs under load). Instead the answer is followed by a FIN, what still arrives is dropped, and
 * the socket goes when the client closes or after LINGER_MS.
 */
function lingerAfterAnswer(incoming: IncomingMessage): void {
  const socket = incoming.socket;
  socket.destroySoon = () => {
    socket.end();
    socket.on("data", () => {}).resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once("close", () => clearTimeout(timer));
    socket.once("end", () => socket.destroy());
  };
}

/** Reads and drops the rest of a request body; false when it is over the limit or the client stalls. */
function discardRest(incoming: IncomingMessage): Promise<boolean> {
  const declared = Number(incoming.headers["content-length"] ?? NaN);
  if (declared > DRAIN_LIMIT_BYTES) return Promise.resolve(false);
  return new Promise((resolve) => {
    let read = 0;
    let idle: ReturnType<typeof setTimeout>;
    const finish = (whole: boolean) => {
      clearTimeout(idle);
      incoming.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onFail);
      resolve(whole);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(false);
    const onData = (chunk: Uint8Array) => {
      read += chunk.length;
      clearTimeout(idle);
      if (read > DRAIN_LIMIT_BYTES) return finish(false);
      idle = setTimeout(onFail, DRAIN_IDLE_MS);
    };
    idle = setTimeout(onFail, DRAIN_IDLE_MS);
    // The handler's reader of the body (which paused the socket when its queue filled) is done with it:
    // drop it, or it would pause the socket again and keep every chunk read here.
    incoming.removeAllListeners("data");
    incoming.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onFail);
    incoming.resume();
  });
}

/** Error codes of node:http's parser, answered as its default handler does, but with the API's error body. */
type ParserError = { status: number; code: ErrorCode; message: string; hint?: string };
const PARSER_ERRORS: Record<string, ParserError> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: "headers_too_large",
    message: "the request headers are too large",
    hint: "send fewer or shorter headers (node's limit is 16 KiB in all)",
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    code: "body_too_large",
    message: "the chunk extensions are too large",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: "request_timeout",
    message: "the request took too long to send",
  },
};

/**
 * Answers a request node:http could not parse. Its default handler sends a bare status line (an empty 431
 * for oversized headers); clients and scripts expect the API's `{"error":{…}}` body on every 4xx.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const sent = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === "ECONNRESET" || !socket.writable || sent) {
    socket.destroy();
    return;
  }
  const known: ParserError = PARSER_ERRORS[err.code ?? ""] ??
    { status: 400, code: "bad_request", message: "the request is not valid HTTP/1.1" };
  answerOnSocket(
    socket,
    new StationError(known.code, known.message, { status: known.status, hint: known.hint }),
  );
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): StationError {
  if (err.code === "EADDRINUSE") {
    return new StationError("port_in_use", `cannot listen on ${host}:${port}: the port is in use`, {
      hint: "another stn serve may be running (stn status); choose another with --port or server.port",
      exitCode: 1,
    });
  }
  return new StationError("listen_failed", `cannot listen on ${host}:${port}: ${err.message}`);
}
