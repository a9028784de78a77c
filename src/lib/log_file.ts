/** `stn serve`'s log file: $STATION_HOME/logs/stn.log (0600 in a 0700 folder), rotated by size; read back by `stn logs`. */

import { join } from "node:path";
import { createPrivateFile, makePrivateDir } from "./private_files.ts";

/** Size at which stn.log is rotated, and how many rotated files (stn.log.1 … .N) are kept. */
export const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;
export const LOG_FILE_KEEP = 3;

/** The current log file of a logs folder. */
export const logFilePath = (logsDir: string) => join(logsDir, "stn.log");

/** An open log file: lines appended, rotated when it would pass maxBytes. */
export interface LogFile {
  write(line: string): void;
  close(): void;
}

/** Opens (creating, private) the log file of a logs folder for appending. */
export function openLogFile(
  logsDir: string,
  options: { maxBytes?: number; keep?: number } = {},
): LogFile {
  const maxBytes = options.maxBytes ?? LOG_FILE_MAX_BYTES;
  const keep = options.keep ?? LOG_FILE_KEEP;
  const path = logFilePath(logsDir);
  const enc = new TextEncoder();
  makePrivateDir(logsDir);
  const open = () => {
    createPrivateFile(path);
    return Deno.openSync(path, { append: true });
  };
  let file = open();
  let size = Deno.statSync(path).size;
  const rotate = () => {
    file.close();
    for (let i = keep - 1; i >= 1; i--) {
      try {
        Deno.renameSync(`${path}.${i}`, `${path}.${i + 1}`);
      } catch { /* not there yet */ }
    }
    Deno.renameSync(path, `${path}.1`);
    file = open();
    size = 0;
  };
  return {
    write(line) {
      const bytes = enc.encode(line.endsWith("\n") ? line : line + "\n");
      if (size > 0 && size + bytes.length > maxBytes) rotate();
      file.writeSync(bytes);
      size += bytes.length;
    },
    close: () => file.close(),
  };
}

/** The instant a log line was written: its leading ISO time (text) or its `time` field (json). */
export function lineTime(line: string): number | undefined {
  const text = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)\s/.exec(line)?.[1] ??
    /^\{.*"time":"([^"]+)"/.exec(line)?.[1];
  const t = text ? Date.parse(text) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/**
 * The lines of the log (the rotated files first, oldest first) written at or after `since` (ms), the
 * last `tail` of them; a line without a time (a continuation) goes with the line before it.
 */
export function readLogLines(logsDir: string, options: { tail?: number; since?: number } = {}): string[] {
  const path = logFilePath(logsDir);
  const files = [...Array.from({ length: LOG_FILE_KEEP }, (_, i) => `${path}.${LOG_FILE_KEEP - i}`), path];
  const lines: string[] = [];
  for (const f of files) {
    try {
      lines.push(...Deno.readTextFileSync(f).split("\n").filter((l) => l !== ""));
    } catch { /* absent */ }
  }
  let keep = options.since === undefined;
  const kept = lines.filter((l) => {
    const t = lineTime(l);
    if (t !== undefined && options.since !== undefined) keep = t >= options.since;
    return keep;
  });
  return options.tail === undefined ? kept : kept.slice(Math.max(0, kept.length - options.tail));
}

/** Writes what is appended to the log from now on until `signal` fires (after a rotation, from the new start). */
export async function followLogFile(
  logsDir: string,
  write: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const path = logFilePath(logsDir);
  let offset = (() => {
    try {
      return Deno.statSync(path).size;
    } catch {
      return 0;
    }
  })();
  const dec = new TextDecoder();
  while (!signal.aborted) {
    let size = 0;
    try {
      size = Deno.statSync(path).size;
    } catch { /* rotated away for a moment */ }
    if (size < offset) offset = 0;
    if (size > offset) {
      const file = await Deno.open(path);
      try {
        await file.seek(offset, Deno.SeekMode.Start);
        const buf = new Uint8Array(size - offset);
        let read = 0;
        while (read < buf.length) {
          const n = await file.read(buf.subarray(read));
          if (n === null) break;
          read += n;
        }
        write(dec.decode(buf.subarray(0, read)));
        offset += read;
      } finally {
        file.close();
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
