/** A unified-style line diff of two texts (`- expected`, `+ actual`), for failing assertions. */

/** The lines of `expected` and `actual` marked `  ` (same), `- ` (only expected) or `+ ` (only actual). */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n"), b = actual.split("\n");
  // Longest common subsequence table; outputs and step paths are small, so O(n·m) is fine.
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: string[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push(`  ${a[i++]}`), j++;
    else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out.join("\n");
}
