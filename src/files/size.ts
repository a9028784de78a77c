/** Formats a byte count for people: "0 B", "512 B", "2.4 MB", "1.1 GB" (powers of 1000, as `ls -h --si`). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v >= 100 ? Math.round(v) : +v.toFixed(1)} ${units[i]}`;
}
