/** The peak resident memory of a process so far (Linux VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1];
  return Number(kb) * 1024;
}
