import { StationError } from "../../errors.ts";
import type { ExecRequest, ExecResult } from "../backend.ts";
import { Capped, execResult, execTarget, KILL_GRACE_MS } from "../exec.ts";
import { type ChannelConnection, channelLost } from "./connection.ts";
import { FieldReader, FieldWriter } from "./protocol.ts";
import { EXIT_FLAG, FRAME } from "./protocol_table.ts";
import { refusal } from "./refusals.ts";

/**
 * Runs one command through the channel with runExec's semantics: output capped per stream and
 * streamed to onOutput, timeout → exit 124 and timed_out, cancel → 409 exec_canceled. A timeout or
 * cancel sends KILL, which the supervisor carries out on the command's whole process tree. A command
 * is never re-run: if the channel goes while it runs, it fails with sandbox_channel_lost (the owner of
 * the channel then kills the channel's group, so none of its processes survive).
 */
export function channelExec(conn: ChannelConnection, request: ExecRequest): Promise<ExecResult> {
  const started = performance.now();
  const { cmd, cwd } = execTarget(request);
  const env = Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const payload = new FieldWriter().str(cwd).u32(cmd.length);
  for (const arg of cmd) payload.str(arg);
  payload.u32(env.length);
  for (const kv of env) payload.str(kv);
  const out = new Capped(request.maxOutputBytes);
  const err = new Capped(request.maxOutputBytes);

  return new Promise<ExecResult>((resolve, reject) => {
    let stopped: "timeout" | "canceled" | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
    const onAbort = () => stop("canceled");
    const settle = (exitCode: number | undefined, failure?: StationError) => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      request.signal?.removeEventListener("abort", onAbort);
      if (stopped === "canceled") {
        reject(new StationError("exec_canceled", "the command was canceled and killed", { status: 409 }));
      } else if (stopped === "timeout") {
        resolve(execResult({ out, err, exitCode: 124, timedOut: true, started }));
      } else if (failure || exitCode === undefined) {
        reject(failure ?? channelLost("the command's end was not reported"));
      } else {
        resolve(execResult({ out, err, exitCode, timedOut: false, started }));
      }
    };
    let id = 0;
    try {
      id = conn.request(FRAME.EXEC, payload.bytes(), {
        frame(f) {
          if (f.type === FRAME.STDOUT || f.type === FRAME.STDERR) {
            const stream = f.type === FRAME.STDOUT ? "stdout" : "stderr";
            (stream === "stdout" ? out : err).push(f.payload);
            request.onOutput?.(stream, f.payload);
            return;
          }
          if (f.type === FRAME.ERROR) {
            conn.done(id);
            return settle(undefined, refusal(f.payload, { op: "exec", path: cwd, target: cwd }));
          }
          if (f.type !== FRAME.EXIT) return;
          const r = new FieldReader(f.payload);
          const code = r.i32();
          if (r.u8() & EXIT_FLAG.lost) {
            // The command killed the shim that followed its processes: only killing the channel's whole
            // group (lose → the owner's onLost) is sure to end them; this request hears lost() after.
            return conn.lose("the command killed the supervisor's process that was watching it");
          }
          conn.done(id);
          settle(code);
        },
        lost: (e) => settle(undefined, e),
      });
    } catch (e) {
      clearTimeout(timer);
      return reject(e);
    }
    const stop = (why: "timeout" | "canceled") => {
      if (stopped) return;
      stopped = why;
      conn.send(FRAME.KILL, id).catch(() => {});
      // A command the supervisor cannot end in time: the channel is dropped and its group killed.
      graceTimer = setTimeout(() => conn.lose("a killed command did not end"), KILL_GRACE_MS);
    };
    if (request.signal?.aborted) onAbort();
    request.signal?.addEventListener("abort", onAbort, { once: true });
  });
}
