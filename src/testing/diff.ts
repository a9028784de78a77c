/** A readable line diff of two texts (recorded vs now), for drift errors and test reports. */

/** Most lines compared exactly; past this, longer inputs compare only their differing middle. */
const MAX_CELLS = 4_000_000;

/**
 * The lines that differ between `before` and `after`, with `context` equal lines around each change:
 * `- ` a line only before, `+ ` only after, `  ` unchanged, each prefixed by its line number (after's
 * for `+` and unchanged lines, before's for `-`), and `…` between separate changes. Empty when equal.
 */
export function lineDiff(before: string[], after: string[], context = 2): string[] {
  // The common head and tail need no table: only the middle is compared line by line.
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head && tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  if (a.length === 0 && b.length === 0) return [];
  const ops: { op: " " | "-" | "+"; line: string; n: number }[] = [];
  for (let i = 0; i < head; i++) ops.push({ op: " ", line: before[i], n: i + 1 });
  for (const o of middle(a, b)) {
    ops.push({ op: o.op, line: o.line, n: head + o.at + 1 });
  }
  for (let i = 0; i < tail; i++) {
    ops.push({ op: " ", line: after[after.length - tail + i], n: after.length - tail + i + 1 });
  }
  const keep = ops.map((_o, i) =>
    ops.slice(Math.max(0, i - context), i + context + 1).some((x) => x.op !== " ")
  );
  const out: string[] = [];
  ops.forEach((o, i) => {
    if (!keep[i]) {
      if (i === 0 || keep[i - 1]) out.push("  …");
      return;
    }
    out.push(`${o.op} ${String(o.n).padStart(4)} | ${o.line}`);
  });
  return out;
}

/** The middle's edit script by longest common subsequence (`at`: the line's index in its own side). */
function middle(a: string[], b: string[]): { op: " " | "-" | "+"; line: string; at: number }[] {
  if (a.length * b.length > MAX_CELLS) {
    return [
      ...a.map((line, at) => ({ op: "-" as const, line, at })),
      ...b.map((line, at) => ({ op: "+" as const, line, at })),
    ];
  }
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: { op: " " | "-" | "+"; line: string; at: number }[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push({ op: " ", line: b[j], at: j }), i++, j++;
    else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push({ op: "-", line: a[i], at: i }), i++;
    } else out.push({ op: "+", line: b[j], at: j }), j++;
  }
  return out;
}
