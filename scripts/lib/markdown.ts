/** Pieces of generated Markdown shared by the scripts that write parts of docs/. */

/** A Markdown table with padded columns (as `deno fmt` writes them). */
export function markdownTable(header: string[], rows: string[][]): string {
  const width = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i])).join(" | ")} |`;
  return [line(header), `| ${width.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

/** A page with the section between `<!-- NAME:start -->` and `<!-- NAME:end -->` replaced by `body`. */
export function withSection(page: string, name: string, body: string): string {
  const [start, end] = [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`];
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the page lacks the ${start} … ${end} markers`);
  return page.slice(0, from + start.length) + "\n\n" + body + "\n\n" + page.slice(to);
}
