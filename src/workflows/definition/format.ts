/** One validation issue as `file:line:col: error CODE: message` with its hint, for the CLI and logs. */

import type { ValidationIssue } from "./validate.ts";

/** How a caller colours the parts of an issue (the CLI passes its stream's styles; logs pass none). */
export interface IssuePaint {
  error(s: string): string;
  warning(s: string): string;
  dim(s: string): string;
}

const PLAIN: IssuePaint = { error: (s) => s, warning: (s) => s, dim: (s) => s };

/**
 * One validation issue as `file:line:col: error CODE: message (at /pointer)`, the form editors and CI logs
 * link to, and its `  hint: …` line when it has one. Used by `validate`, `run FILE`, `apply` and sync.
 */
export function formatIssue(
  file: string,
  issue: ValidationIssue,
  severity: "error" | "warning",
  paint: IssuePaint = PLAIN,
): string[] {
  const where = issue.line ? `${file}:${issue.line}:${issue.column ?? 1}` : file;
  const sev = severity === "error" ? paint.error("error") : paint.warning("warning");
  const lines = [`${where}: ${sev} ${issue.code}: ${issue.message} (at ${issue.path})`];
  if (issue.hint) lines.push(`  ${paint.dim("hint:")} ${issue.hint}`);
  return lines;
}

/** A file that did not validate, with its issues. */
export interface InvalidFile {
  file: string;
  errors: ValidationIssue[];
}

/** An invalid file's issues, one `file:line:col: error CODE: message (at /pointer)` line each (no hints). */
export function formatInvalid(inv: InvalidFile): string[] {
  return inv.errors.map((e) => formatIssue(inv.file, e, "error")[0]);
}
