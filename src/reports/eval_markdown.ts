/**
 * `stn eval report` to a .md file: an eval run as Markdown (GitHub-flavoured tables), for a pull request's
 * comment or a job summary: the same sections as the HTML report, its charts as text bars.
 */

import type { EvalCaseResult, EvalCompare, EvalRun } from "../contract/evals.ts";
import { formatDuration } from "../lib/duration.ts";
import { formatUsd } from "../telemetry/cost.ts";
import { caseLabel } from "./eval_parts.tsx";
import { type Bin, distributions, formatDelta, formatRate, formatScore, formatValue } from "./eval_stats.ts";

/** Marks a file as a report stn wrote (`stn eval report` overwrites only those). */
export const REPORT_MARK_MD = "<!-- stn eval report -->";

/** A table cell: one line, pipes escaped. */
const cell = (v: unknown) => String(v ?? "").replace(/\r?\n/g, " ").replace(/\|/g, "\\|");

function table(head: string[], rows: unknown[][]): string[] {
  return [
    `| ${head.map(cell).join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
    "",
  ];
}

/** A fenced block long enough that the text's own backticks cannot close it. */
function fenced(text: string): string[] {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return [fence, text, fence, ""];
}

function bars(title: string, bins: Bin[]): string[] {
  const max = Math.max(1, ...bins.map((b) => b.count));
  const label = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(n < 10 ? 1 : 0));
  return [
    `${title}:`,
    "",
    ...fenced(
      bins.map((b) =>
        `${`${label(b.from)}–${label(b.to)}`.padStart(12)} ${
          "█".repeat(Math.round(20 * b.count / max))
        } ${b.count}`
      ).join("\n"),
    ),
  ];
}

function compareLines(k: EvalCompare): string[] {
  return [
    `## Compared with ${k.base_eval_id}`,
    "",
    `Pass rate ${formatRate(k.pass_rate.base)} → ${formatRate(k.pass_rate.head)} (${
      formatDelta(k.pass_rate.delta)
    }); ` +
    `threshold ${k.max_regression}: **${k.regressed ? "regressed" : "passed"}**.`,
    "",
    ...table(
      ["Scorer", "Base mean", "Head mean", "Delta", "Base pass", "Head pass", "Regressed"],
      k.scorers.map((s) => [
        s.scorer,
        formatScore(s.base_mean),
        formatScore(s.head_mean),
        formatDelta(s.delta),
        formatRate(s.base_pass_rate),
        formatRate(s.head_pass_rate),
        s.regressed ? "yes" : "no",
      ]),
    ),
    `Cases that got worse: ${k.regressed_cases.join(", ") || "none"}.`,
    "",
  ];
}

function caseLines(run: EvalRun, c: EvalCaseResult): string[] {
  return [
    `### ${caseLabel(c, run.repeat)} — ${c.status}, score ${formatScore(c.score)}`,
    "",
    `Run \`${c.run_id ?? "not started"}\` · ${c.total_tokens} tokens · ${formatUsd(c.cost_usd)} · ` +
    (c.duration_ms === null ? "–" : formatDuration(c.duration_ms)),
    "",
    "Task:",
    "",
    ...fenced(c.task ?? JSON.stringify(c.input, null, 2)),
    ...(c.expected !== undefined ? ["Expected:", "", ...fenced(JSON.stringify(c.expected, null, 2))] : []),
    ...(c.rubric ? [`Rubric: ${c.rubric}`, ""] : []),
    "Answer:",
    "",
    ...fenced(c.answer ?? "(none)"),
    ...(c.error ? [`Error: \`${c.error.code}\` ${c.error.message}`, ""] : []),
    ...table(
      ["Scorer", "Score", "Passed", "Value", "Reasoning"],
      c.scores.map((s) => [
        s.scorer,
        formatScore(s.score),
        s.passed ? "yes" : "no",
        formatValue(s.value, s.scorer),
        [s.reasoning, s.error ? `${s.error.code}: ${s.error.message}` : null].filter(Boolean).join(" — "),
      ]),
    ),
    `Tool calls: ${
      c.tool_calls.map((t) => `\`${t.name}\` ${t.status}${t.error ? ` (${t.error})` : ""}`).join(", ") ||
      "none"
    }.`,
    "",
  ];
}

/** The whole report of an eval run (its `cases` included) as Markdown. */
export function evalReportMarkdown(run: EvalRun): string {
  const a = run.aggregates;
  const cases = run.cases ?? [];
  const lines = [
    REPORT_MARK_MD,
    `# Eval report: ${run.target}`,
    "",
    `\`${run.eval_id}\` · ${run.kind} ${run.target} (${run.environment}) · dataset ${run.dataset.name} ` +
    `(${run.dataset.cases} case(s)${run.repeat > 1 ? ` × ${run.repeat}` : ""}) · **${run.status}**`,
    "",
    `- Cases: ${run.cases_done}/${run.cases_total} done, ${a.passed} passed, ${a.failed} failed, ${a.errors} error(s)`,
    `- Pass rate: ${formatRate(a.pass_rate)} · mean score: ${formatScore(a.mean_score)}`,
    `- Model: ${run.model ?? "the agent's own"} · judge: ${run.judge_model ?? "–"}`,
    `- Tokens: ${run.total_tokens} · cost: ${formatUsd(run.cost_usd)} · duration: ${
      run.duration_ms === null ? "–" : formatDuration(run.duration_ms)
    }`,
    ...(run.error ? [`- Error: \`${run.error.code}\` ${run.error.message}`] : []),
    "",
    ...(run.baseline?.compare ? compareLines(run.baseline.compare) : []),
    "## Aggregates",
    "",
    ...table(
      ["Scorer", "Scored", "Errors", "Mean", "p50", "p90", "Pass rate", "Value mean", "Value p90"],
      a.scorers.map((s) => [
        s.scorer,
        s.count,
        s.errors,
        formatScore(s.mean),
        formatScore(s.p50),
        formatScore(s.p90),
        formatRate(s.pass_rate),
        formatValue(s.value_mean, s.scorer),
        formatValue(s.value_p90, s.scorer),
      ]),
    ),
    "## Score distributions",
    "",
    ...distributions(run, cases).flatMap((d) => [
      ...(d.scores.length ? bars(`${d.scorer} scores`, d.scores) : []),
      ...(d.values ? bars(`${d.scorer} values (${d.values.unit})`, d.values.bins) : []),
    ]),
    "## Tools",
    "",
    ...(a.tools.length
      ? table(
        ["Tool", "Calls", "Succeeded", "Failed", "Success rate", "Errors"],
        a.tools.map((t) => [
          t.tool,
          t.calls,
          t.succeeded,
          t.failed,
          formatRate(t.success_rate),
          t.errors.map((e) => `${e.message} (×${e.count})`).join("; ") || "–",
        ]),
      )
      : ["No case called a tool.", ""]),
    "## Cases",
    "",
    ...cases.flatMap((c) => caseLines(run, c)),
  ];
  return lines.join("\n");
}
