/**
 * The summary table `deno task bench` prints at the end (docs/benchmarks.md): each benchmark reports its
 * headline figures with tableRow(), and run.ts collects the rows from their output.
 */

/** Marks a summary row in a benchmark's output; run.ts strips the marker and prints the rows as a table. */
export const ROW_MARK = "@@bench-row ";

/** One figure of the summary table: what was measured, its value, the baseline of the same run, the ratio. */
export interface TableRow {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
}

/** Prints one summary row (run.ts gathers them; run alone, the line shows what the table will say). */
export function tableRow(row: TableRow): void {
  console.log(ROW_MARK + JSON.stringify(row));
}

/** The gathered rows as a markdown table. */
export function markdownTable(rows: TableRow[]): string {
  const head: TableRow = {
    figure: "figure",
    value: "stn",
    baseline: "baseline (same run)",
    ratio: "ratio",
    target: "target",
  };
  const cells = [head, ...rows].map((r) => [r.figure, r.value, r.baseline, r.ratio, r.target]);
  const widths = cells[0].map((_, i) => Math.max(3, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(" | ")} |`;
  return [line(cells[0]), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)]
    .join("\n");
}
