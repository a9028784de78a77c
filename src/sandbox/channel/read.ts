import type { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import type { StationError } from "../../errors.ts";
import type { FileRead } from "../backend.ts";
import { deadline } from "../deadline.ts";
import { fileChanged, tooLarge } from "../errors.ts";
import { workspacePath } from "../paths.ts";
import type { ChannelConnection, Pending } from "./connection.ts";
import { FieldReader, FieldWriter, type Frame } from "./protocol.ts";
import { FRAME } from "./protocol_table.ts";
import { refusal, type RefusedOp } from "./refusals.ts";

// How much one READ_MORE asks for: the supervisor sends it in DATA frames of up to 256 KiB.
const WINDOW = 1024 * 1024;

/**
 * Opens a workspace file through the supervisor, which opens it without following any symlink, checks
 * on the open descriptor that it is a regular file of at most maxBytes and answers its size; the bytes
 * then come as the stream is read (READ_MORE per window, so a slow reader holds the file, not memory).
 */
export async function channelRead(
  conn: ChannelConnection,
  callTimeoutMs: number,
  path: string,
  maxBytes: number,
): Promise<FileRead> {
  const target = workspacePath(path);
  const body = new ChannelFile(conn, { op: "read", path, target, bytes: maxBytes });
  body.open(new FieldWriter().str(target).u64(maxBytes).bytes());
  const size = await deadline(body.header, callTimeoutMs, `reading ${target}`).catch((err) => {
    body.destroy();
    throw err;
  });
  if (size > maxBytes) {
    body.destroy();
    throw tooLarge(target, size, maxBytes);
  }
  return { size, stream: body };
}

/**
 * The file's bytes as a stream: exactly the announced size. A file that shrank while it was read
 * (ERROR file_changed, or an END short of the size) fails the stream with file_changed, so an HTTP
 * response with that Content-Length is cut off, never finished short.
 */
class ChannelFile extends Readable implements Pending {
  readonly header: Promise<number>;
  readonly #conn: ChannelConnection;
  readonly #req: RefusedOp;
  #id = 0;
  #open = false;
  #size?: number;
  #passed = 0;
  #requested = 0;
  #reading = false;
  #asked = false;
  #answer!: { resolve: (size: number) => void; reject: (err: StationError) => void };

  constructor(conn: ChannelConnection, req: RefusedOp) {
    super();
    this.#conn = conn;
    this.#req = req;
    this.header = new Promise((resolve, reject) => this.#answer = { resolve, reject });
    // A refusal or a loss after the caller gave up waiting must not become an unhandled rejection.
    this.header.catch(() => {});
  }

  /** Sends the READ (throws ChannelGone when the channel is already down). */
  open(payload: Uint8Array): void {
    this.#id = this.#conn.request(FRAME.READ, payload, this);
    this.#open = true;
  }

  frame(f: Frame): void {
    if (f.type === FRAME.SIZE && this.#size === undefined) {
      this.#size = new FieldReader(f.payload).u64();
      this.#answer.resolve(this.#size);
      if (this.#reading) this.#more();
    } else if (f.type === FRAME.DATA) {
      this.#passed += f.payload.length;
      if (this.push(f.payload as Buffer)) this.#more();
    } else if (f.type === FRAME.END) {
      this.#finish();
      if (this.#passed === this.#size) this.push(null);
      else this.destroy(fileChanged(this.#req.target, this.#size ?? 0, this.#passed));
    } else if (f.type === FRAME.ERROR) {
      this.#finish();
      const err = refusal(f.payload, this.#req);
      if (this.#size === undefined) this.#answer.reject(err);
      else this.destroy(err);
    }
  }

  lost(err: StationError): void {
    this.#open = false;
    this.#answer.reject(err);
    this.destroy(err);
  }

  override _read(): void {
    this.#reading = true;
    this.#more();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // A reader that goes away early (or a refused size) closes the file in the container.
    if (this.#open) {
      this.#conn.send(FRAME.READ_CLOSE, this.#id).catch(() => {});
      this.#finish();
    }
    done(err);
  }

  // Asks for the next window once the last one has come in, while bytes are still due.
  #more(): void {
    if (!this.#open || this.#size === undefined) return;
    // (An empty file is asked once too: its END answers the first READ_MORE.)
    if (this.#asked && (this.#passed < this.#requested || this.#requested >= this.#size)) return;
    this.#asked = true;
    const want = Math.min(WINDOW, this.#size - this.#requested);
    this.#requested += want;
    this.#conn.send(FRAME.READ_MORE, this.#id, new FieldWriter().u32(want).bytes()).catch(() => {});
  }

  #finish(): void {
    this.#open = false;
    this.#conn.done(this.#id);
  }
}
