/**
 * Running a command in a container over docker exec: output capped per stream, timeouts that kill its group.
 */

import type Docker from "dockerode";
import { Buffer } from "node:buffer";
import { type Duplex, type Readable, Transform } from "node:stream";
import { StationError } from "../errors.ts";
import type { ExecRequest, ExecResult, OutputStream } from "./backend.ts";
import { deadline } from "./deadline.ts";
import { engineError } from "./errors.ts";
import { WORKSPACE, workspacePath } from "./paths.ts";

/** What every exec needs: the engine, the sandbox user, and how long one engine call may take. */
export interface ExecContext {
  docker: Docker;
  uid: number;
  gid: number;
  /** Deadline of each Docker Engine call (sandbox.docker_timeout). */
  callTimeoutMs: number;
}

/** How long a killed command may take to let go of its output stream before we stop waiting. */
export const KILL_GRACE_MS = 5_000;
// Internal commands (list, delete, kill) are small and quick; they get their own fixed bounds.
const INTERNAL_TIMEOUT_MS = 60_000;
const INTERNAL_OUTPUT_BYTES = 16 * 1024 * 1024;
// Exec groups are drawn from here, far above any uid/gid an image defines.
const GROUP_BASE = 1_000_000_000;
const GROUP_SPAN = 1_000_000_000;

/**
 * A fresh group id for one exec. Every exec runs as the sandbox uid with its own primary gid; a
 * process cannot change its gids without CAP_SETGID (all capabilities are dropped and
 * no-new-privileges blocks setgid binaries), so every process the command starts — through setsid,
 * `env -i`, a double fork, reparenting to PID 1 — still carries it, and the kill finds them all by it.
 */
export function execGroup(): number {
  return GROUP_BASE + Math.floor(Math.random() * GROUP_SPAN);
}

/** An exec whose output stream is open. */
export interface StartedExec {
  group: number;
  /** The engine's multiplexed stdout/stderr stream (and, with stdin, the way to the command's stdin). */
  raw: Duplex;
  /** The exit code once the command has ended (undefined if the engine does not say). */
  exitCode(): Promise<number | undefined>;
}

/** Creates and starts a command as the sandbox user in its own exec group (each engine call under the deadline). */
export async function startExec(
  ctx: ExecContext,
  containerId: string,
  opts: { cmd: string[]; env?: Record<string, string>; cwd?: string; group?: number; stdin?: boolean },
): Promise<StartedExec> {
  const group = opts.group ?? execGroup();
  const container = ctx.docker.getContainer(containerId);
  const exec = await deadline(
    container.exec({
      Cmd: opts.cmd,
      User: `${ctx.uid}:${group}`,
      WorkingDir: opts.cwd ?? WORKSPACE,
      Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
      AttachStdin: opts.stdin ?? false,
      AttachStdout: true,
      AttachStderr: true,
    }),
    ctx.callTimeoutMs,
    "starting a command",
  ).catch((err) => {
    throw engineError("starting a command", err);
  });
  // with hijack, dockerode answers the raw socket (a Duplex); its types say a Readable.
  const raw = await deadline(
    exec.start({ hijack: true, stdin: opts.stdin ?? false }) as unknown as Promise<Duplex>,
    ctx.callTimeoutMs,
    "starting a command",
    (late) => late.destroy(),
  ).catch((err) => {
    throw engineError("starting a command", err);
  });
  // Errors of the attach stream end the exec (see ended()); they must never reach the process.
  raw.on("error", () => {});
  return {
    group,
    raw,
    exitCode: () =>
      deadline(exec.inspect(), ctx.callTimeoutMs, "inspecting a command").then(
        (info) => info.ExitCode ?? undefined,
        () => undefined,
      ),
  };
}

/** Resolves when a stream has ended, closed or failed (whichever comes first). */
export function ended(stream: Readable): Promise<void> {
  return new Promise<void>((resolve) => {
    if (stream.destroyed || stream.readableEnded) return resolve();
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
}

/**
 * Splits the engine's multiplexed stream (8-byte frame headers: type, 0, 0, 0, length) into stdout,
 * which this transform passes on with backpressure, and stderr, handed to onStderr.
 */
export function demuxer(onStderr: (chunk: Buffer) => void): Transform {
  let pending = Buffer.alloc(0);
  let type = 0;
  let left = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      pending = Buffer.alloc(0);
      while (buf.length > 0) {
        if (left === 0) {
          if (buf.length < 8) {
            pending = Buffer.from(buf);
            break;
          }
          type = buf[0];
          left = buf.readUInt32BE(4);
          buf = buf.subarray(8);
          continue;
        }
        const part = buf.subarray(0, left);
        left -= part.length;
        buf = buf.subarray(part.length);
        if (type === 2) onStderr(part);
        else this.push(part);
      }
      done();
    },
  });
}

/** Runs one command to its end (or its timeout/cancel, which kill its whole exec group). */
export async function runExec(
  ctx: ExecContext,
  containerId: string,
  request: ExecRequest,
): Promise<ExecResult> {
  const started = performance.now();
  const { cmd, cwd } = execTarget(request);
  const proc = await startExec(ctx, containerId, { cmd, env: request.env, cwd });
  const out = new Capped(request.maxOutputBytes);
  const err = new Capped(request.maxOutputBytes);
  const collect = (stream: OutputStream, into: Capped) => (b: Buffer) => {
    into.push(b);
    request.onOutput?.(stream, b);
  };
  const stdout = demuxer(collect("stderr", err));
  stdout.on("data", collect("stdout", out));
  stdout.on("error", () => {});
  proc.raw.pipe(stdout);
  // The command is over when the engine closes the stream; its last output is through when the
  // demuxer has passed it on.
  const done = ended(proc.raw).then(() => {
    if (!stdout.writableEnded) stdout.end();
    return ended(stdout);
  });

  let stopped: "timeout" | "canceled" | undefined;
  const stop = (why: "timeout" | "canceled") => {
    if (stopped) return;
    stopped = why;
    killGroup(ctx, containerId, proc.group).catch(() => {});
    // Nothing should outlive the kill; if the stream stays open anyway, the caller is not held.
    setTimeout(() => proc.raw.destroy(), KILL_GRACE_MS).unref?.();
  };
  const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
  const onAbort = () => stop("canceled");
  if (request.signal?.aborted) onAbort();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await done;
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
  }
  if (stopped === "canceled") {
    throw new StationError("exec_canceled", "the command was canceled and killed", { status: 409 });
  }
  const exitCode = await proc.exitCode();
  return execResult({ out, err, exitCode: exitCode ?? -1, timedOut: stopped === "timeout", started });
}

/** The argv and working directory of a request: a shell string runs with /bin/sh -c, cwd stays in /workspace. */
export function execTarget(request: ExecRequest): { cmd: string[]; cwd: string } {
  const cmd = typeof request.cmd === "string" ? ["/bin/sh", "-c", request.cmd] : request.cmd;
  if (cmd.length === 0) {
    throw new StationError("invalid_command", "the command is empty", { status: 400, exitCode: 2 });
  }
  return { cmd, cwd: workspacePath(request.cwd ?? WORKSPACE) };
}

/** The result of an ended exec from its collected output (a timed-out command exits 124). */
export function execResult(r: {
  out: Capped;
  err: Capped;
  exitCode: number;
  timedOut: boolean;
  started: number;
}): ExecResult {
  const o = r.out.output();
  const e = r.err.output();
  return {
    exit_code: r.timedOut ? 124 : r.exitCode,
    stdout: o.text,
    stderr: e.text,
    ...(o.b64 !== undefined ? { stdout_b64: o.b64 } : {}),
    ...(e.b64 !== undefined ? { stderr_b64: e.b64 } : {}),
    truncated: r.out.truncated || r.err.truncated,
    stdout_truncated: r.out.truncated,
    stderr_truncated: r.err.truncated,
    timed_out: r.timedOut,
    duration_ms: Math.round(performance.now() - r.started),
  };
}

// Finds the live processes whose real gid is the exec's group, stops them (so none forks on), kills
// them, and looks again until none is left: children forked between a look and the stop are found
// by the next look. Zombies are skipped (they are dead; PID 1 reaps them).
const KILL_SCRIPT = `g=$1; round=0
while [ $round -lt 50 ]; do
  pids=
  for s in /proc/[0-9]*/status; do
    st=
    { while read -r k v _; do
        case $k in
          State:) st=$v ;;
          Gid:) if [ "$v" = "$g" ] && [ "$st" != Z ]; then p=\${s%/status}; pids="$pids \${p#/proc/}"; fi; break ;;
        esac
      done; } < "$s" 2>/dev/null
  done
  [ -z "$pids" ] && exit 0
  kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null
  round=$((round + 1))
done
exit 1`;

/**
 * Kills every process of one exec group. Runs as the sandbox uid in its own group: the same uid may
 * signal its processes without CAP_KILL, and its own group keeps it out of the kill.
 */
export async function killGroup(ctx: ExecContext, containerId: string, group: number): Promise<void> {
  const proc = await startExec(ctx, containerId, {
    cmd: ["/bin/sh", "-c", KILL_SCRIPT, "kill", String(group)],
    group: ctx.gid,
  });
  proc.raw.resume();
  const timer = setTimeout(() => proc.raw.destroy(), INTERNAL_TIMEOUT_MS);
  try {
    await ended(proc.raw);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a helper command (list, delete) and returns its result. */
export function runInternal(ctx: ExecContext, containerId: string, cmd: string[]): Promise<ExecResult> {
  return runExec(ctx, containerId, {
    cmd,
    timeoutMs: INTERNAL_TIMEOUT_MS,
    maxOutputBytes: INTERNAL_OUTPUT_BYTES,
  });
}

/** Collects a stream's bytes up to a cap, remembering whether more came. */
export class Capped {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(chunk: Buffer): void {
    const room = this.#cap - this.#size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  /**
   * The output as text, plus the exact bytes in base64 when they are not valid UTF-8 (the text then
   * has U+FFFD where bytes could not be decoded): text stays easy to use, bytes stay exact.
   */
  output(): { text: string; b64?: string } {
    const bytes = Buffer.concat(this.#chunks);
    try {
      return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } catch {
      return { text: new TextDecoder().decode(bytes), b64: bytes.toString("base64") };
    }
  }
}
