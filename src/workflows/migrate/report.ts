/**
 * What a migration did to one file: every construct it changed in a way worth knowing (a note) and
 * every construct it could not convert (an error, which makes the command exit 1), each with the
 * line it was on and why.
 */

/** One finding of a migration. */
export interface MigrationIssue {
  severity: "error" | "note";
  /** 1-based line (and column) in the file it is about. */
  line?: number;
  column?: number;
  /** JSON pointer of the construct in the input file (or in the output, for `in: "output"`). */
  path: string;
  message: string;
  /** Set on problems found by validating the converted output: the position is in the output. */
  in?: "output";
}

/** The outcome of migrating one file. */
export interface MigrationResult {
  file: string;
  /** The converted text (YAML, or JSON for a JSON file). */
  text: string;
  /** True when the text differs from the input. */
  changed: boolean;
  /** How many constructs were converted. */
  converted: number;
  issues: MigrationIssue[];
}

/** `file:line:col: error|note: message (at /path)`, like `stn workflow validate`. */
export function formatMigrationIssue(file: string, outFile: string | undefined, i: MigrationIssue): string {
  const name = i.in === "output" ? outFile ?? `${file} (converted)` : file;
  const where = i.line ? `${name}:${i.line}:${i.column ?? 1}` : name;
  return `${where}: ${i.severity}: ${i.message} (at ${i.path || "/"})`;
}

/** The one-line summary of a migration run. */
export function summary(results: MigrationResult[], check: boolean): string {
  const errors = results.reduce((n, r) => n + r.issues.filter((i) => i.severity === "error").length, 0);
  const changed = results.filter((r) => r.changed).length;
  const verb = check ? "would change" : "changed";
  return `${results.length} file(s): ${changed} ${verb}, ${
    results.reduce((n, r) => n + r.converted, 0)
  } construct(s) converted, ${errors} not convertible`;
}

/** True when any result has a construct that could not be converted. */
export function hasErrors(results: MigrationResult[]): boolean {
  return results.some((r) => r.issues.some((i) => i.severity === "error"));
}
