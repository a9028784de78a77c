/** One channel to a container's supervisor: its exec, the HELLO, requests by id, and its loss. */

import { Buffer } from "node:buffer";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { errorMessage, StationError } from "../../errors.ts";
import { log } from "../../log.ts";
import { deadline } from "../deadline.ts";
import { demuxer, type ExecContext, execGroup, startExec } from "../exec.ts";
import { encodeFrame, FieldReader, type Frame, FrameDecoder } from "./protocol.ts";
import { FRAME, PROTOCOL_VERSION } from "./protocol_table.ts";
import { SUPERVISOR_PATH } from "./supervisor_binary.ts";

/** Receives the answers to one request, or the news that the channel is gone. */
export interface Pending {
  frame(frame: Frame): void;
  lost(err: StationError): void;
}

/** The channel could not be opened. `absent`: the container has no supervisor (an older stn made it). */
export class ChannelUnavailable extends Error {
  readonly absent: boolean;

  constructor(message: string, absent = false) {
    super(message);
    this.absent = absent;
  }
}

/** A request found the channel already gone before anything was sent: safe to do it over docker exec. */
export class ChannelGone extends Error {}

/** 503: the channel broke while a request was under way (a command is never re-run behind the caller's back). */
export function channelLost(reason: string): StationError {
  return new StationError("sandbox_channel_lost", `the channel to the sandbox broke: ${reason}`, {
    status: 503,
    hint:
      "every process the command started was killed; run it again if it is safe to (it may have run in part)",
  });
}

// How much of what a failed supervisor start printed is kept for the reason.
const REASON_BYTES = 2_000;
const MAX_ID = 0xffff_ffff;

/**
 * One open channel: the attached Docker exec of the supervisor, running as the sandbox uid in its own
 * group. Requests are multiplexed by id; answers are routed to the request's Pending. The channel is
 * lost when its stream ends or fails, a frame is malformed, or someone calls lose(); every open
 * request then hears lost(), and onLost runs once (the owner kills the group and falls back).
 */
export class ChannelConnection {
  readonly containerId: string;
  /** The group every process started through this channel carries (see killGroup). */
  readonly group: number;
  /** The supervisor's pid inside the container (from HELLO). */
  supervisorPid = 0;
  /**
   * Called once when the channel is lost (not when close() ends it); the open requests hear of the
   * loss once it has settled (the owner kills the channel's processes first).
   */
  onLost: (reason: string) => Promise<void> = () => Promise.resolve();
  readonly #raw: Duplex;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #gone?: string;
  #drain?: Promise<void>;

  private constructor(containerId: string, group: number, raw: Duplex) {
    this.containerId = containerId;
    this.group = group;
    this.#raw = raw;
  }

  /** Starts the supervisor and waits (under the call deadline) for its HELLO. */
  static async open(ctx: ExecContext, containerId: string): Promise<ChannelConnection> {
    const group = execGroup();
    const proc = await startExec(ctx, containerId, { cmd: [SUPERVISOR_PATH], stdin: true, group });
    const conn = new ChannelConnection(containerId, group, proc.raw);
    const decoder = new FrameDecoder();
    // Until HELLO, stdout is kept as text: a failed start (no binary) is the engine's message, not frames.
    const early: Buffer[] = [];
    let hello: (() => void) | undefined;
    const helloSeen = new Promise<void>((resolve) => hello = resolve);
    let stderrLine = "";
    const out = demuxer((chunk) => {
      const lines = (stderrLine + chunk.toString()).split("\n");
      stderrLine = lines.pop()!;
      for (const line of lines) {
        log.warn(`sandbox supervisor: ${line}`, { container: containerId.slice(0, 12) });
      }
    });
    out.on("error", () => {});
    out.on("data", (chunk: Buffer) => {
      if (hello) early.push(chunk);
      let frames: Frame[];
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        if (!hello) conn.lose(`the supervisor sent a malformed frame (${errorMessage(err)})`);
        return;
      }
      // A payload that does not read as its type says (a field past its end) drops the channel; it
      // must never throw out of this stream handler.
      try {
        for (const f of frames) {
          if (f.type === FRAME.HELLO && hello) {
            const r = new FieldReader(f.payload);
            const version = r.u32();
            conn.supervisorPid = r.u32();
            if (version !== PROTOCOL_VERSION) {
              return conn.lose(`the supervisor speaks protocol ${version}, stn ${PROTOCOL_VERSION}`);
            }
            hello();
            hello = undefined;
            early.length = 0;
          } else conn.#pending.get(f.id)?.frame(f);
        }
      } catch (err) {
        conn.lose(`the supervisor sent a malformed answer (${errorMessage(err)})`);
      }
    });
    proc.raw.pipe(out);
    const ended = new Promise<string>((resolve) => {
      const end = (why: string) => () => resolve(why);
      proc.raw.once("end", end("its stream ended"));
      proc.raw.once("close", end("its stream closed"));
      proc.raw.once("error", (err: Error) => resolve(`its stream failed: ${err.message}`));
    });
    ended.then((why) => conn.lose(`the supervisor stopped (${why})`));
    const started = await deadline(
      Promise.race([helloSeen.then(() => true), ended.then(() => false)]),
      ctx.callTimeoutMs,
      "opening the sandbox channel",
    ).catch((err) => {
      proc.raw.destroy();
      throw new ChannelUnavailable(errorMessage(err));
    });
    if (!started) {
      const text = Buffer.concat(early).subarray(0, REASON_BYTES).toString().trim();
      const code = await proc.exitCode();
      // No binary (an older stn made the container), or one for another machine: it never will start.
      const absent = text.includes(SUPERVISOR_PATH) && /no such file|exec format error/i.test(text);
      throw new ChannelUnavailable(
        absent
          ? `the container has no usable ${SUPERVISOR_PATH} (an older stn made it): ${text}`
          : `the supervisor did not start (exit ${code ?? "unknown"}): ${text || conn.#gone}`,
        absent,
      );
    }
    conn.#idle();
    return conn;
  }

  /** Why the channel is gone, or undefined while it is open. */
  get gone(): string | undefined {
    return this.#gone;
  }

  /** Registers the handler under a fresh id and sends the request; returns the id. */
  request(type: number, payload: Uint8Array, pending: Pending): number {
    if (this.#gone) throw new ChannelGone(this.#gone);
    let id = this.#nextId;
    while (this.#pending.has(id)) id = id >= MAX_ID ? 1 : id + 1;
    this.#nextId = id >= MAX_ID ? 1 : id + 1;
    this.#pending.set(id, pending);
    (this.#raw as Partial<Socket>).ref?.();
    this.#raw.write(encodeFrame(type, id, payload));
    return id;
  }

  /** Sends a frame of an open request; resolves once the stream can take more (backpressure). */
  send(type: number, id: number, payload?: Uint8Array): Promise<void> {
    if (this.#gone) return Promise.reject(channelLost(this.#gone));
    if (this.#raw.write(encodeFrame(type, id, payload)) || this.#gone) return Promise.resolve();
    this.#drain ??= new Promise<void>((resolve) => {
      const done = () => {
        this.#raw.off("drain", done);
        this.#raw.off("close", done);
        this.#drain = undefined;
        resolve();
      };
      this.#raw.on("drain", done);
      this.#raw.on("close", done);
    });
    return this.#drain;
  }

  /** Forgets a request: its last answer came, or it was abandoned (late answers are dropped). */
  done(id: number): void {
    this.#pending.delete(id);
    this.#idle();
  }

  /** Drops the channel: the stream is closed, onLost runs, then every open request hears lost(). */
  lose(reason: string): void {
    if (this.#gone) return;
    this.#gone = reason;
    this.#raw.destroy();
    const err = channelLost(reason);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.onLost(reason).catch(() => {}).finally(() => {
      for (const p of pending) p.lost(err);
    });
  }

  /** Closes the channel on purpose: the supervisor sees its input end, kills what still runs and exits. */
  close(): void {
    if (this.#gone) return;
    this.#gone = "the channel was closed";
    this.#raw.end();
    // The socket goes once the supervisor has ended; nothing waits for that.
    setTimeout(() => this.#raw.destroy(), 5_000).unref?.();
    (this.#raw as Partial<Socket>).unref?.();
    const err = channelLost(this.#gone);
    for (const p of this.#pending.values()) p.lost(err);
    this.#pending.clear();
  }

  // An idle channel must not keep the process alive (stn exits when its work is done); one with
  // requests under way must.
  #idle(): void {
    if (this.#pending.size === 0) (this.#raw as Partial<Socket>).unref?.();
  }
}
