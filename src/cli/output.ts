/** The CLI's one output layer: text or --json on stdout, progress and errors on stderr, colour rules. */

import { StationError } from "../errors.ts";
import { lazyImport } from "../lib/lazy_import.ts";

/**
 * The CLI's one output layer (docs/cli.md). Results go to stdout — a text view for people, or with
 * --json (`-o json`) exactly one JSON object, with `-o yaml` the same as YAML — and progress and errors go to stderr. Each stream decides its own
 * colour from its own isTerminal(), so `stn … > out.txt` on a terminal writes plain text to the file
 * while stderr stays coloured.
 */

/** Ends a command with an exit code without printing anything more (e.g. `sandbox exec` → the program's code). */
export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** ANSI styles; each one is the identity when its stream is not coloured. */
export interface Style {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

let colorDisabled = false;
/** With `-o yaml`: how a structured result is written (the YAML package is loaded only then, ~25 ms). */
let yamlText: ((value: unknown) => string) | undefined;

/** Structured results as YAML instead of JSON (`-o yaml`; `--json` and `-o json` keep JSON). */
export async function useYamlOutput(): Promise<void> {
  yamlText = (await lazyImport<typeof import("../lib/yaml.ts")>("../lib/yaml.ts", import.meta.url)).yamlText;
}

/** A structured result as the chosen format prints it: pretty JSON, or a YAML document. */
function structured(value: unknown): string {
  return yamlText ? yamlText(value).trimEnd() : JSON.stringify(value, null, 2);
}

/** Turns colour off on both streams (the global `--no-color`). */
export function disableColor(): void {
  colorDisabled = true;
}

/** Whether a stream gets colour: a terminal, no NO_COLOR (any non-empty value), no --no-color. */
function colored(stream: { isTerminal(): boolean }): boolean {
  return !colorDisabled && !Deno.env.get("NO_COLOR") && stream.isTerminal();
}

function styleFor(stream: { isTerminal(): boolean }): Style {
  const paint = (code: number) => (s: string) => colored(stream) ? `\x1b[${code}m${s}\x1b[0m` : s;
  return { red: paint(31), green: paint(32), yellow: paint(33), dim: paint(2), bold: paint(1) };
}

/** Styles for text written to stdout. */
export const outStyle: Style = styleFor(Deno.stdout);
/** Styles for text written to stderr (progress, warnings, errors). */
export const errStyle: Style = styleFor(Deno.stderr);

/** Lines a text view produces; nothing when it printed (or streamed) its output itself. */
export type Lines = string | string[] | void;

/** How a command's result is shown: as JSON with --json, else through its text view. */
export interface RenderOptions<T> {
  json: boolean;
  /** The text view for people; it receives stdout's styles. */
  text?: (result: T, style: Style) => Lines;
}

function writeLines(lines: Lines, write: (line: string) => void): void {
  if (lines === undefined) return;
  for (const line of Array.isArray(lines) ? lines : [lines]) write(line);
}

/** Shows a command's result on stdout: one JSON document with --json, else the text view. */
export function render<T>(result: T, options: RenderOptions<T>): void {
  if (options.json) return console.log(structured(result));
  if (options.text) writeLines(options.text(result, outStyle), (l) => console.log(l));
}

/**
 * Shows one item of a stream (`workflow logs`, `--watch`): with --json one compact JSON line (NDJSON), with
 * `-o yaml` one YAML document (`---` first), else its text.
 */
export function renderLine<T>(item: T, options: RenderOptions<T>): void {
  if (options.json) return console.log(yamlText ? `---\n${structured(item)}` : JSON.stringify(item));
  render(item, options);
}

/** Writes lines for people on stderr (progress, notes); never part of a command's result. */
export function note(lines: Lines | ((style: Style) => Lines)): void {
  writeLines(typeof lines === "function" ? lines(errStyle) : lines, (l) => console.error(l));
}

/**
 * Ends a command that failed although it has a result to show (invalid files, a failed run): the text
 * view goes to stdout as usual, while under --json the result becomes the error's `details`, so stdout
 * still holds one object, `{"error": …}`. The error itself is printed by `renderError`.
 */
export function fail<T>(result: T, options: RenderOptions<T>, error: StationError): never {
  if (!options.json) render(result, options);
  throw new StationError(error.code, error.message, {
    status: error.status,
    hint: error.hint,
    details: result,
    exitCode: error.exitCode,
  });
}

/**
 * Prints a command's error (docs/design/errors.md#cli-output): `error: …` and `hint: …` on stderr always, and
 * with --json also the API's error body `{"error": {code, message, hint?, details?}}` on stdout, on one line.
 */
export function renderError(err: StationError, options: { json: boolean }): void {
  console.error(`${errStyle.red("error:")} ${err.message}`);
  if (err.hint) console.error(`${errStyle.dim("hint:")} ${err.hint}`);
  // One line, so it also ends an NDJSON stream (`workflow logs --json`) as a parsable line.
  if (options.json) console.log(yamlText ? structured(err.toBody()) : JSON.stringify(err.toBody()));
}

/** Aligned `label: value` lines. */
export function fields(pairs: [string, string][]): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${(k + ":").padEnd(width)} ${v}`);
}

/** Rows as an aligned table under a header. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (c ?? "").padEnd(widths[i])).join("  ").trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** Re-exported so commands can throw StationError without another import. */
export { StationError };
