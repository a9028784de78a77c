/** The human reporter of a test run: ✓/✗ per case, each failing assertion with its diff, coverage, a summary. */

import type { CaseResult, TestRun, WorkflowCoverage } from "../contract/tests.ts";
import { formatIssue } from "../workflows/definition/format.ts";

/** Colours the reporter uses (the CLI passes its stream's styles). */
export interface ReportStyle {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
}

/** One case's lines: ✓ or ✗ with its name, and under a failure each assertion and its diff. */
export function caseLines(c: CaseResult, style: ReportStyle): string[] {
  const time = style.dim(`(${c.duration_ms} ms${c.recorded ? ", cassette re-recorded" : ""})`);
  if (c.status === "passed") return [`${style.green("✓")} ${c.file} › ${c.name} ${time}`];
  const lines = [`${style.red("✗")} ${c.file} › ${c.name} ${time}`];
  for (const f of c.failures) {
    lines.push(`    ${style.red(f.assertion)}: ${f.message}`);
    for (const d of f.diff?.split("\n") ?? []) {
      lines.push(
        `      ${d.startsWith("- ") ? style.red(d) : d.startsWith("+ ") ? style.green(d) : style.dim(d)}`,
      );
    }
  }
  return lines;
}

/** Coverage lines: per workflow its percentage, then the states and branches not exercised. */
export function coverageLines(cov: WorkflowCoverage[], style: ReportStyle): string[] {
  if (cov.length === 0) return [];
  const lines = ["", "workflow coverage:"];
  for (const w of cov) {
    const missedStates = w.states.filter((s) => !w.visited.includes(s));
    const missedBranches = w.branches.filter((b) => !w.taken.includes(b));
    lines.push(
      `  ${w.workflow}  ${w.percent}%  states ${w.visited.length}/${w.states.length}, branches ${w.taken.length}/${w.branches.length}`,
    );
    if (missedStates.length) lines.push(style.dim(`    states not visited: ${missedStates.join(", ")}`));
    if (missedBranches.length) lines.push(style.dim(`    branches not taken: ${missedBranches.join(", ")}`));
  }
  return lines;
}

/** The whole report: invalid files (`file:line:col`), or each case, coverage and the summary line. */
export function reportLines(run: TestRun, style: ReportStyle, options: { cases?: boolean } = {}): string[] {
  if (run.invalid.length) {
    const paint = { error: style.red, warning: style.yellow, dim: style.dim };
    return run.invalid.flatMap((inv) => inv.errors.flatMap((e) => formatIssue(inv.file, e, "error", paint)));
  }
  const lines = options.cases === false ? [] : run.cases.flatMap((c) => caseLines(c, style));
  lines.push(...coverageLines(run.coverage, style));
  const { total, passed, failed } = run.summary;
  const summary = `${passed}/${total} passed` + (failed ? `, ${failed} failed` : "") +
    ` in ${((run.duration_ms ?? 0) / 1000).toFixed(2)} s`;
  lines.push("", failed ? style.red(summary) : style.green(summary));
  return lines;
}
