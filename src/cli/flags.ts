import { IDEMPOTENCY_KEY } from "../contract/headers.ts";
import { usageError } from "../errors.ts";
import { parseDuration } from "../lib/duration.ts";

/**
 * The CLI's short flags: one meaning per letter across every command (docs/cli.md). A test walks the
 * command tree and fails when a command gives a letter another meaning, or uses one not listed here.
 */
export const SHORT_FLAGS: ReadonlyArray<{ short: string; long: string; meaning: string }> = [
  {
    short: "-o",
    long: "--output",
    meaning: "json, yaml or table: the output format; else write to this file",
  },
  { short: "-f", long: "--force", meaning: "replace or delete without asking" },
  { short: "-F", long: "--follow", meaning: "keep printing a run's events until it ends" },
  { short: "-c", long: "--code", meaning: "the program to run, given inline" },
  { short: "-e", long: "--env", meaning: "NAME=value environment variable (repeatable)" },
  { short: "-a", long: "--arg", meaning: "argument for the program (repeatable)" },
  { short: "-r", long: "--recursive", meaning: "include subdirectories (-R is the same)" },
  { short: "-R", long: "--recursive", meaning: "same as -r" },
  { short: "-y", long: "--yes", meaning: "ask nothing: confirm, or take flags and defaults" },
  { short: "-V", long: "--version", meaning: "print stn's version" },
  { short: "-h", long: "--help", meaning: "show help" },
];

/** The short-flag table for the help footer. */
export function shortFlagHelp(): string {
  const rows = SHORT_FLAGS.filter((f) => f.short !== "-R").map((f) =>
    `  ${f.short === "-r" ? "-r, -R" : f.short}`.padEnd(10) + f.long.padEnd(13) + f.meaning
  );
  return ["Short flags (the same meaning in every command):", ...rows].join("\n");
}

/** The --idempotency-key of a start, checked here (a bad one could not even be sent as a header). */
export function idempotencyKeyFlag(key: string | undefined): string | undefined {
  if (key === undefined || IDEMPOTENCY_KEY.test(key)) return key;
  throw usageError(
    "invalid_idempotency_key",
    `--idempotency-key ${JSON.stringify(key)} is not 1-255 visible ASCII characters`,
    'e.g. --idempotency-key "nightly-$(date +%F)" or a CI job id',
  );
}

/** The --ttl / --keep of a file: the duration to send ("0" for --keep), checked here; undefined = the default. */
export function ttlFlag(opts: { ttl?: string; keep?: boolean }): string | undefined {
  if (opts.keep && opts.ttl !== undefined && parseDuration(opts.ttl) !== 0) {
    throw usageError("invalid_ttl", "--keep and --ttl contradict each other", "pass one of them");
  }
  if (opts.keep) return "0";
  if (opts.ttl !== undefined && parseDuration(opts.ttl) === null) {
    throw usageError(
      "invalid_ttl",
      `invalid --ttl ${JSON.stringify(opts.ttl)}`,
      'a duration like "30s", "24h" or "7d"; 0 = never',
    );
  }
  return opts.ttl;
}

/** `--priority`: a run's priority, 0 to 9. */
export function priorityFlag(v: string): number {
  if (!/^[0-9]$/.test(v)) {
    throw usageError(
      "invalid_usage",
      `--priority must be 0 to 9, got ${JSON.stringify(v)}`,
      "9 runs first, 0 last",
    );
  }
  return Number(v);
}

/** The formats `-o`/`--output` names (kubectl's habit); any other value is a command's output file. */
const OUTPUT_FORMATS = ["json", "yaml", "table"] as const;

/**
 * `-o json|yaml|table` (also `--output`, `-o=json`, `-ojson`) anywhere before `--`, as the switches the
 * commands read: `--json` for json and yaml (yaml is JSON's structure, printed as YAML), nothing for table
 * (the text view, the default). A file literally named `json` is written with `-o ./json`.
 */
export function outputFormatArgs(args: string[]): { args: string[]; yaml: boolean } {
  const end = args.indexOf("--");
  const own = end < 0 ? args : args.slice(0, end);
  const out: string[] = [];
  let yaml = false;
  const format = (v: string | undefined) =>
    OUTPUT_FORMATS.find((f) => f === v) as typeof OUTPUT_FORMATS[number] | undefined;
  for (let i = 0; i < own.length; i++) {
    const inline = /^(?:-o=?|--output=)(.+)$/.exec(own[i])?.[1];
    const spaced = own[i] === "-o" || own[i] === "--output" ? own[i + 1] : undefined;
    const f = format(inline) ?? format(spaced);
    if (!f) {
      out.push(own[i]);
      continue;
    }
    if (spaced !== undefined) i++;
    if (f === "yaml") yaml = true;
    if (f !== "table" && !out.includes("--json")) out.push("--json");
  }
  return { args: end < 0 ? out : [...out, ...args.slice(end)], yaml };
}
