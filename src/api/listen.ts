import { createAdaptorServer } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { StationError } from "../errors.ts";

/** A listening HTTP server. */
export interface Listener {
  /** The port it listens on (the one chosen by the OS when 0 was asked for). */
  port: number;
  /** Stops accepting, lets requests in flight finish, then closes every connection. */
  close(): Promise<void>;
}

/**
 * Serves fetch on host:port over node:http.
 *
 * Not Deno.serve: its HTTP/1 server keeps reading a chunked request body into memory while the handler
 * is busy between reads, so a fast client uploading to a slower object store grew the server by most of
 * the file (measured: +110 MiB for 256 MiB in 64 KiB chunks, which is how fetch() sends a stream).
 * node:http pauses the socket instead, so an upload is held back to the speed it is stored at.
 */
export async function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  host: string,
  port: number,
): Promise<Listener> {
  const server = createAdaptorServer({ fetch, hostname: host, overrideGlobalObjects: false }) as Server;
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
        server.close(() => resolve());
        if (inFlight === 0) server.closeAllConnections();
        else server.closeIdleConnections();
      }),
  };
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
