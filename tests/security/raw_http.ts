import net from "node:net";
import { sleep } from "../../src/lib/async.ts";

/** An HTTP/1.1 answer read off a raw socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The socket error seen, if any (a reset while writing). */
  error?: string;
}

/** Splits raw response bytes into status, headers and body (no chunked decoding: answers here are sized). */
export function parseAnswer(raw: string, error?: string): RawAnswer {
  const end = raw.indexOf("\r\n\r\n");
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine, ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: end < 0 ? "" : raw.slice(end + 4),
    error,
  };
}

/**
 * Sends a request the way a plain client does: the head, then the whole body in chunks (a pause after
 * each), and only then reads the answer until the server closes or goes quiet. Nothing is read while
 * sending, so an answer the server sends early only arrives if the connection survives the upload.
 */
export function sendThenRead(
  port: number,
  head: string,
  body: { chunk: Uint8Array; count: number; pauseMs: number } | undefined,
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let raw = "";
    let error: string | undefined;
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      clearTimeout(quiet);
      socket.destroy();
      resolve(parseAnswer(raw, error));
    };
    socket.on("error", (e) => (error ??= e.message));
    socket.on("close", done);
    socket.once("connect", async () => {
      const write = (data: string | Uint8Array) =>
        new Promise<void>((r) => socket.write(data, (e) => (e && (error ??= e.message), r())));
      await write(head);
      for (let i = 0; body && i < body.count && !socket.destroyed; i++) {
        await write(body.chunk);
        await sleep(body.pauseMs);
      }
      socket.on("data", (d: Uint8Array) => {
        raw += new TextDecoder().decode(d);
        clearTimeout(quiet);
        quiet = setTimeout(done, 1_000);
      });
      quiet = setTimeout(done, 5_000);
    });
  });
}

/**
 * Sends a chunked body while reading, as curl does: stops sending when the answer arrives (or after
 * `count` chunks) and returns the answer with how many body bytes went out.
 */
export function sendWhileReading(
  port: number,
  head: string,
  chunk: Uint8Array,
  count: number,
): Promise<RawAnswer & { sent: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let raw = "";
    let sent = 0;
    let error: string | undefined;
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      clearTimeout(quiet);
      socket.destroy();
      resolve({ ...parseAnswer(raw, error), sent });
    };
    socket.on("error", (e) => (error ??= e.message));
    socket.on("close", done);
    socket.on("data", (d: Uint8Array) => {
      raw += new TextDecoder().decode(d);
      clearTimeout(quiet);
      quiet = setTimeout(done, 500);
    });
    socket.once("connect", async () => {
      const write = (data: string | Uint8Array) =>
        new Promise<void>((r) => socket.write(data, (e) => (e && (error ??= e.message), r())));
      await write(head);
      const size = chunk.length.toString(16);
      for (let i = 0; i < count && raw === "" && !socket.destroyed; i++) {
        await write(`${size}\r\n`);
        await write(chunk);
        await write("\r\n");
        sent += chunk.length;
      }
      if (raw === "" && !socket.destroyed) await write("0\r\n\r\n");
    });
  });
}

/**
 * Writes `parts` on a raw socket — strings as they are, numbers as pauses of that many ms — then reads until
 * the server closes the connection or boundMs has passed; `closed` says whether the server closed it (a
 * bound reached means it kept the connection open). Reading goes on while writing.
 */
export function converse(
  port: number,
  parts: (string | number)[],
  boundMs: number,
): Promise<RawAnswer & { closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let raw = "";
    let error: string | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(bound);
      socket.destroy();
      resolve({ ...parseAnswer(raw, error), closed });
    };
    const bound = setTimeout(() => finish(false), boundMs);
    socket.on("data", (d: Uint8Array) => raw += new TextDecoder().decode(d));
    socket.on("error", (e) => (error ??= e.message));
    socket.on("close", () => finish(true));
    socket.once("connect", async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        if (typeof part === "number") await sleep(part);
        else socket.write(part);
      }
    });
  });
}
