import { Buffer } from "node:buffer";
import { pipeline, Transform } from "node:stream";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import type { FileRead } from "./backend.ts";
import { deadline } from "./deadline.ts";
import {
  fileChanged,
  fileUnreadable,
  isDirectory,
  notAFile,
  notFound,
  outsideWorkspace,
  symlinkNotAFile,
  throughSymlink,
  tooLarge,
} from "./errors.ts";
import { demuxer, ended, type ExecContext, killGroup, startExec } from "./exec.ts";
import { workspacePath } from "./paths.ts";

/**
 * Reads one workspace file inside the container, as the sandbox user, in one exec. Why this cannot
 * be raced: the file is opened once (fd 3) and every check is made on that open descriptor, never on
 * the path again — /proc/self/fd/3 names where the opened file really is (the kernel's path of the
 * open file, after every symlink it followed), `-f` and `stat -L` on it describe that same file, and
 * `head` copies from that descriptor. A symlink swapped in before the open makes the real path differ
 * from the asked one and the read is refused; one swapped in after the open changes nothing, because
 * nothing looks at the path any more. Running as the sandbox user adds that even a mistake here can
 * only show what that user may read anyway (never /etc/shadow), unlike the engine's archive
 * endpoint, which reads as root. `explain` only words the refusal; it decides nothing.
 *
 * Output: the size on the first line, then exactly that many bytes (head -c stops a growing file at
 * the size announced; a shrinking one gives fewer bytes, which the caller turns into an error).
 * Exit codes: 3 missing, 4 a directory, 5 not a regular file, 7 over max (size on stderr), 8 cannot
 * be opened, 10 a parent is a symlink, 11 the file is a symlink (link and target on stderr), 12 it
 * resolved elsewhere (real path on stderr).
 */
const READ_SCRIPT = `t=$1 max=$2
explain() {
  p=/workspace r=\${t#/workspace/}
  while [ -n "$r" ]; do
    c=\${r%%/*}
    if [ "$c" = "$r" ]; then r=; else r=\${r#*/}; fi
    p=$p/$c
    if [ -L "$p" ]; then
      printf '%s\\n%s\\n' "$p" "$(readlink "$p")" >&2
      if [ -n "$r" ]; then exit 10; fi
      exit 11
    fi
  done
}
send() {
  exec 2>&4
  [ "$(readlink /proc/self/fd/3)" = "$t" ] || { explain; readlink /proc/self/fd/3 >&2; exit 12; }
  [ -f /proc/self/fd/3 ] || exit 5
  size=$(stat -L -c %s /proc/self/fd/3) || exit 13
  [ "$size" -le "$max" ] || { echo "$size" >&2; exit 7; }
  echo "$size"
  exec head -c "$size" <&3
}
[ -e "$t" ] || { explain; exit 3; }
[ -d "$t" ] && { explain; exit 4; }
[ -f "$t" ] || { explain; exit 5; }
exec 4>&2
send 2>/dev/null 3< "$t" || { explain; exit 8; }`;

/** Opens a workspace file for reading without following any symlink; refuses files over maxBytes. */
export async function readWorkspaceFile(
  ctx: ExecContext,
  containerId: string,
  path: string,
  maxBytes: number,
): Promise<FileRead> {
  const target = workspacePath(path);
  const proc = await startExec(ctx, containerId, {
    cmd: ["/bin/sh", "-c", READ_SCRIPT, "read", target, String(maxBytes)],
  });
  const stderr: Buffer[] = [];
  const body = new SizedBody(target);
  const abandon = () => {
    proc.raw.destroy();
    killGroup(ctx, containerId, proc.group).catch((err) =>
      log.warn("stopping a sandbox file reader failed", { error: errorMessage(err) })
    );
  };
  // Any failure on the way (engine stream, demuxing, a short file, the reader of `body` going away)
  // ends here: it belongs to this request and is never thrown at the process.
  pipeline(proc.raw, demuxer((b) => stderr.push(b)), body, (err) => {
    if (err) abandon();
  });
  const size = await deadline(body.header, ctx.callTimeoutMs, `reading ${target}`).catch((err) => {
    abandon();
    throw err;
  });
  if (size !== undefined) {
    if (size > maxBytes) {
      abandon();
      throw tooLarge(target, size, maxBytes);
    }
    return { size, stream: body };
  }
  // No header: the script refused. Its exit code and stderr say why.
  await deadline(ended(proc.raw), ctx.callTimeoutMs, `reading ${target}`).catch((err) => {
    abandon();
    throw err;
  });
  const code = await proc.exitCode();
  const detail = Buffer.concat(stderr).toString().trim().split("\n");
  throw refusal({ path, target, maxBytes }, code, detail);
}

/** The file a refused read asked for: its path as given, where it resolved, and the size cap. */
interface RefusedRead {
  path: string;
  target: string;
  maxBytes: number;
}

/** The error for the read script's exit code, with the detail lines it wrote to stderr. */
function refusal(
  { path, target, maxBytes }: RefusedRead,
  code: number | undefined,
  detail: string[],
): StationError {
  switch (code) {
    case 3:
      return notFound(path);
    case 4:
      return isDirectory(path);
    case 5:
      return notAFile(target);
    case 7:
      return tooLarge(target, Number(detail[0]), maxBytes);
    case 8:
      return fileUnreadable(target);
    case 10:
      return throughSymlink(path, detail[0], detail[1] ?? "?");
    case 11:
      return symlinkNotAFile(target, detail[1] ?? "?");
    case 12:
      return outsideWorkspace(path, `it resolved to ${detail.at(-1)} when opened`);
    default:
      return new StationError(
        "sandbox_command_failed",
        `reading ${target} failed (exit ${code ?? "unknown"}): ${detail.join(" ")}`,
        { status: 500 },
      );
  }
}

/**
 * The reader's stdout: takes the size line off the front (resolving `header`), then passes exactly
 * that many bytes on. Fewer bytes mean the file shrank while it was read: the stream fails with
 * file_changed, so an HTTP response with that Content-Length is cut off, never finished short.
 */
class SizedBody extends Transform {
  readonly header: Promise<number | undefined>;
  #resolve!: (size: number | undefined) => void;
  #line: Buffer[] = [];
  #size?: number;
  #passed = 0;
  readonly #target: string;

  constructor(target: string) {
    super();
    this.#target = target;
    this.header = new Promise((resolve) => this.#resolve = resolve);
    // Errors reach the request through the stream's reader (or the pipeline callback), not here.
    this.on("error", () => this.#resolve(undefined));
  }

  override _transform(chunk: Buffer, _enc: string, done: (err?: Error) => void): void {
    if (this.#size === undefined) {
      const nl = chunk.indexOf(10);
      if (nl < 0) {
        this.#line.push(chunk);
        return done();
      }
      this.#line.push(chunk.subarray(0, nl));
      this.#size = Number(Buffer.concat(this.#line).toString());
      this.#resolve(this.#size);
      chunk = chunk.subarray(nl + 1);
    }
    const room = this.#size - this.#passed;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#passed += part.length;
    if (part.length > 0) this.push(part);
    done();
  }

  override _flush(done: (err?: Error) => void): void {
    this.#resolve(undefined);
    if (this.#size === undefined || this.#passed === this.#size) return done();
    done(fileChanged(this.#target, this.#size, this.#passed));
  }
}
