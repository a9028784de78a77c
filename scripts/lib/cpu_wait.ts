/**
 * How long this process's main thread was runnable but waited for a CPU (Linux's schedstat; 0 elsewhere):
 * the machine's other work, which a latency tail follows on a shared machine.
 */

/** A reader of the main thread's CPU wait so far (ms), cheap enough to call once per step (one pread). */
export function cpuWaitClock(): { read(): number; close(): void } {
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(`/proc/self/task/${Deno.pid}/schedstat`);
  } catch {
    return { read: () => 0, close() {} };
  }
  const buf = new Uint8Array(64);
  const decoder = new TextDecoder();
  return {
    read() {
      file.seekSync(0, Deno.SeekMode.Start);
      const n = file.readSync(buf) ?? 0;
      // "<ns on a CPU> <ns runnable, waiting for one> <timeslices>"
      return Number(decoder.decode(buf.subarray(0, n)).split(" ")[1]) / 1e6;
    },
    close: () => file.close(),
  };
}
