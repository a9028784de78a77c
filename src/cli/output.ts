import { StationError } from "../errors.ts";

/** Ends a command with an exit code without printing an error (e.g. `workflow run --wait` → 3). */
export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

const color = !Deno.env.get("NO_COLOR") && Deno.stderr.isTerminal();
const paint = (code: number) => (s: string) => color ? `\x1b[${code}m${s}\x1b[0m` : s;
/** ANSI styles for stderr, off when NO_COLOR is set or stderr is not a terminal. */
export const style = { red: paint(31), green: paint(32), yellow: paint(33), dim: paint(2), bold: paint(1) };

/** Prints a value as JSON on stdout (for --json). */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** Prints `error: …` and the hint on stderr (DESIGN §6). */
export function printError(err: StationError): void {
  console.error(`${style.red("error:")} ${err.message}`);
  if (err.hint) console.error(`${style.dim("hint:")} ${err.hint}`);
}

/** Prints aligned `label: value` lines on stdout. */
export function printFields(fields: [string, string][]): void {
  const width = Math.max(...fields.map(([k]) => k.length)) + 1;
  for (const [k, v] of fields) console.log(`${(k + ":").padEnd(width)} ${v}`);
}

/** Prints rows as an aligned table with a header on stdout. */
export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (c ?? "").padEnd(widths[i])).join("  ").trimEnd();
  console.log(line(headers));
  for (const row of rows) console.log(line(row));
}

/** Re-exported so commands can throw StationError without another import. */
export { StationError };
