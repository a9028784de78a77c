/** Workspace file writes, lists and deletes through the supervisor. */

import { StationError } from "../../errors.ts";
import type { FileContent, FileEntry } from "../backend.ts";
import { deadline } from "../deadline.ts";
import { deleteWorkspaceRefused, engineError, isDirectory, sizeMismatch } from "../errors.ts";
import { WORKSPACE, workspacePath } from "../paths.ts";
import type { ChannelConnection, Pending } from "./connection.ts";
import { FieldReader, FieldWriter, type Frame } from "./protocol.ts";
import { ENTRY_TYPES, FRAME, LIMITS } from "./protocol_table.ts";
import { refusal, type RefusedOp } from "./refusals.ts";

/** The answers of one request, taken in order; the channel's loss rejects the next take. */
class Answers implements Pending {
  readonly #frames: Frame[] = [];
  #waiting?: { resolve: (f: Frame) => void; reject: (e: StationError) => void };
  #lost?: StationError;
  /** An ERROR arrived (a write stops sending data when it sees one). */
  failed = false;

  frame(f: Frame): void {
    if (f.type === FRAME.ERROR) this.failed = true;
    if (this.#waiting) {
      this.#waiting.resolve(f);
      this.#waiting = undefined;
    } else this.#frames.push(f);
  }

  lost(err: StationError): void {
    this.#lost = err;
    this.#waiting?.reject(err);
    this.#waiting = undefined;
  }

  /** The next answer, waited for at most ms. */
  next(ms: number, what: string): Promise<Frame> {
    const queued = this.#frames.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#lost) return Promise.reject(this.#lost);
    const next = new Promise<Frame>((resolve, reject) => this.#waiting = { resolve, reject });
    // A loss after the deadline has given up must not become an unhandled rejection.
    next.catch(() => {});
    return deadline(next, ms, what);
  }
}

/** Waits for OK; an ERROR becomes the exec path's error for the same refusal. */
async function expectOk(answers: Answers, ms: number, req: RefusedOp, what: string): Promise<void> {
  const f = await answers.next(ms, what);
  if (f.type === FRAME.ERROR) throw refusal(f.payload, req);
  if (f.type !== FRAME.OK) throw new Error(`unexpected answer 0x${f.type.toString(16)} while ${what}`);
}

/**
 * Writes exactly `size` bytes into a workspace file through the supervisor, which creates the parents,
 * writes a temporary file beside the name and renames it over: a failed or aborted write leaves the old
 * file. Data goes in frames of at most 256 KiB, with the stream's backpressure.
 */
export async function channelWrite(
  conn: ChannelConnection,
  callTimeoutMs: number,
  path: string,
  { data, size, mode = 0o644 }: FileContent,
): Promise<void> {
  const target = workspacePath(path);
  if (target === WORKSPACE) throw isDirectory(path);
  if (data instanceof Uint8Array && data.length !== size) throw sizeMismatch("the file", size);
  const req: RefusedOp = { op: "write", path, target, bytes: size };
  const what = `writing ${target}`;
  const answers = new Answers();
  const id = conn.request(FRAME.WRITE, new FieldWriter().str(target).u32(mode).u64(size).bytes(), answers);
  let finished = false;
  try {
    await expectOk(answers, callTimeoutMs, req, what);
    let sent = 0;
    const put = async (chunk: Uint8Array) => {
      for (let at = 0; at < chunk.length && !answers.failed; at += LIMITS.max_data) {
        await conn.send(FRAME.WRITE_DATA, id, chunk.subarray(at, at + LIMITS.max_data));
      }
    };
    if (data instanceof Uint8Array) {
      await put(data);
      sent = size;
    } else {
      for await (const chunk of data) {
        sent += (chunk as Uint8Array).length;
        if (sent > size) {
          data.destroy();
          throw sizeMismatch("the file", size);
        }
        await put(chunk as Uint8Array);
        if (answers.failed) break;
      }
    }
    if (sent !== size && !answers.failed) throw sizeMismatch("the file", size);
    finished = true;
    await expectOk(answers, callTimeoutMs, req, what);
  } catch (err) {
    // The supervisor removes its temporary file; the old file stays as it was.
    if (!finished && !conn.gone) conn.send(FRAME.WRITE_ABORT, id).catch(() => {});
    if (err instanceof StationError) throw err;
    throw engineError(what, err);
  } finally {
    conn.done(id);
  }
}

/** Lists a workspace directory (recursive never descends into a symlink), sorted by path. */
export async function channelList(
  conn: ChannelConnection,
  callTimeoutMs: number,
  path: string,
  recursive: boolean,
): Promise<FileEntry[]> {
  const dir = workspacePath(path);
  const answers = new Answers();
  const id = conn.request(FRAME.LIST, new FieldWriter().str(dir).u8(recursive ? 1 : 0).bytes(), answers);
  const entries: FileEntry[] = [];
  try {
    for (;;) {
      const f = await answers.next(callTimeoutMs, `listing ${dir}`);
      if (f.type === FRAME.ERROR) throw refusal(f.payload, { op: "list", path, target: dir });
      if (f.type === FRAME.OK) break;
      if (f.type !== FRAME.ENTRIES) continue;
      const r = new FieldReader(f.payload);
      while (!r.done) {
        const type = ENTRY_TYPES[r.u8()] ?? "other";
        const mode = r.u32().toString(8);
        const size = r.u64();
        const mtime = new Date(r.i64() * 1000).toISOString();
        entries.push({ path: r.str(), type, size, mode, mtime });
      }
    }
  } finally {
    conn.done(id);
  }
  return entries.sort((a, b) => a.path.localeCompare(b.path));
}

/** Deletes a workspace file, or a directory with recursive; a symlink as the last name is removed itself. */
export async function channelDelete(
  conn: ChannelConnection,
  callTimeoutMs: number,
  path: string,
  recursive: boolean,
): Promise<void> {
  const target = workspacePath(path);
  if (target === WORKSPACE) throw deleteWorkspaceRefused(WORKSPACE);
  const answers = new Answers();
  const id = conn.request(FRAME.DELETE, new FieldWriter().str(target).u8(recursive ? 1 : 0).bytes(), answers);
  try {
    await expectOk(answers, callTimeoutMs, { op: "delete", path, target }, `deleting ${target}`);
  } finally {
    conn.done(id);
  }
}
