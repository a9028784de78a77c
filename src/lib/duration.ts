const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)/;

/** Parses "500ms", "30s", "1h30m", "2d" (or a bare number of milliseconds) into milliseconds; null if invalid. */
export function parseDuration(input: string | number): number | null {
  if (typeof input === "number") return Number.isFinite(input) && input >= 0 ? input : null;
  let rest = input.trim();
  if (rest === "") return null;
  if (/^\d+$/.test(rest)) return Number(rest);
  let total = 0;
  while (rest.length > 0) {
    const m = DURATION.exec(rest);
    if (!m) return null;
    total += Number(m[1]) * UNITS[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Formats milliseconds the way parseDuration reads them ("1h30m", "250ms"). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [["d", 86_400], ["h", 3_600], ["m", 60], ["s", 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join("");
}
