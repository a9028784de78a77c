/**
 * The parts of an eval run's report, shared by the self-contained report file (`stn eval report`) and the
 * dashboard's Evals pages: the run's facts, the aggregates per scorer and per tool, the case list with each
 * case's drill-down (task, answer, scores with the judge's reasoning, tool calls), and a comparison's deltas.
 */

import type { EvalCaseResult, EvalCompare, EvalRun } from "../contract/evals.ts";
import { formatDuration } from "../lib/duration.ts";
import { formatUsd } from "../telemetry/cost.ts";
import { formatDelta, formatRate, formatScore, formatValue } from "./eval_stats.ts";

/** Where a case's run is shown (the dashboard links it; a report file has nowhere to link to). */
export type RunLink = (c: Pick<EvalCaseResult, "run_id">, kind: EvalRun["kind"]) => string | undefined;

const ms = (v: number | null) => v === null ? "–" : formatDuration(v);

/** A table's head row: one column header per name. */
function Head(props: { cols: string[] }) {
  return (
    <thead>
      <tr>
        {props.cols.map((h) => (
          <th scope="col">
            {h}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A status as a badge whose word is always shown (colour is never the only signal). */
export function Badge(props: { status: string }) {
  return <span class={`status status-${props.status}`}>{props.status}</span>;
}

/** The run's facts: what was evaluated, on what, how it went, what it cost. */
export function EvalFacts(props: { run: EvalRun }) {
  const r = props.run;
  const a = r.aggregates;
  const facts: [string, string][] = [
    ["Target", `${r.kind} ${r.target} (${r.environment})`],
    ["Dataset", `${r.dataset.name} · ${r.dataset.cases} case(s)${r.repeat > 1 ? ` × ${r.repeat}` : ""}`],
    ["Model", r.model ?? "the agent's own"],
    ["Judge model", r.judge_model ?? "–"],
    [
      "Cases",
      `${r.cases_done}/${r.cases_total} done · ${a.passed} passed · ${a.failed} failed · ${a.errors} error(s)`,
    ],
    ["Pass rate", formatRate(a.pass_rate)],
    ["Mean score", formatScore(a.mean_score)],
    ["Tokens", String(r.total_tokens)],
    ["Cost", formatUsd(r.cost_usd)],
    ["Started", r.created_at],
    ["Duration", ms(r.duration_ms)],
  ];
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Badge status={r.status} />
        {r.error ? <span class="error-text">{` ${r.error.code}: ${r.error.message}`}</span> : null}
      </dd>
      {facts.map(([k, v]) => (
        <>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </>
      ))}
    </dl>
  );
}

/** Per scorer: cases scored, errors, mean, p50, p90, pass rate, and the measured values' mean/p50/p90. */
export function ScorerTable(props: { run: EvalRun }) {
  const rows = props.run.aggregates.scorers;
  if (rows.length === 0) return <p class="muted">No scorer has scored a case yet.</p>;
  return (
    <table class="scorers">
      <caption>Aggregates per scorer</caption>
      <Head
        cols={[
          "Scorer",
          "Scored",
          "Errors",
          "Mean",
          "p50",
          "p90",
          "Pass rate",
          "Value mean",
          "Value p50",
          "Value p90",
        ]}
      />
      <tbody>
        {rows.map((s) => (
          <tr>
            <th scope="row">{s.scorer}</th>
            <td>{s.count}</td>
            <td>{s.errors}</td>
            <td>{formatScore(s.mean)}</td>
            <td>{formatScore(s.p50)}</td>
            <td>{formatScore(s.p90)}</td>
            <td>{formatRate(s.pass_rate)}</td>
            <td>{formatValue(s.value_mean, s.scorer)}</td>
            <td>{formatValue(s.value_p50, s.scorer)}</td>
            <td>{formatValue(s.value_p90, s.scorer)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Tool effectiveness: each tool's calls, successes, failures and its most frequent errors. */
export function ToolTable(props: { run: EvalRun }) {
  const rows = props.run.aggregates.tools;
  if (rows.length === 0) return <p class="muted">No case called a tool.</p>;
  return (
    <table class="tools">
      <caption>Tool effectiveness</caption>
      <Head cols={["Tool", "Calls", "Succeeded", "Failed", "Success rate", "Errors"]} />
      <tbody>
        {rows.map((t) => (
          <tr>
            <th scope="row">
              <code>{t.tool}</code>
            </th>
            <td>{t.calls}</td>
            <td>{t.succeeded}</td>
            <td>{t.failed}</td>
            <td>{formatRate(t.success_rate)}</td>
            <td>{t.errors.length ? t.errors.map((e) => `${e.message} (×${e.count})`).join("; ") : "–"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The case's label: its id, with the repeat when the run repeats cases. */
export function caseLabel(c: Pick<EvalCaseResult, "case_id" | "repeat">, repeat: number): string {
  return repeat > 1 ? `${c.case_id} #${c.repeat + 1}` : c.case_id;
}

/** One case's drill-down, folded: task and input, answer, error, each scorer's verdict, the tool calls. */
export function CaseDetails(props: { run: EvalRun; case: EvalCaseResult; runLink?: RunLink }) {
  const c = props.case;
  const link = c.run_id ? props.runLink?.(c, props.run.kind) : undefined;
  const label = caseLabel(c, props.run.repeat);
  return (
    <details class="case" id={`case-${c.index}-${c.repeat}`}>
      <summary>
        <strong>{label}</strong> <Badge status={c.status} />{" "}
        <span class="muted">score {formatScore(c.score)}</span>
      </summary>
      <dl class="facts">
        <dt>Run</dt>
        <dd>{c.run_id ? (link ? <a href={link}>{c.run_id}</a> : <code>{c.run_id}</code>) : "not started"}</dd>
        <dt>Usage</dt>
        <dd>{`${c.total_tokens} tokens · ${formatUsd(c.cost_usd)} · ${ms(c.duration_ms)}`}</dd>
      </dl>
      <h4>Task</h4>
      <pre class="text">{c.task ?? JSON.stringify(c.input, null, 2)}</pre>
      {Object.keys(c.vars).length ? <pre class="text">{JSON.stringify(c.vars, null, 2)}</pre> : null}
      {c.expected !== undefined
        ? (
          <>
            <h4>Expected</h4>
            <pre class="text">{JSON.stringify(c.expected, null, 2)}</pre>
          </>
        )
        : null}
      {c.rubric
        ? (
          <p>
            <strong>Rubric:</strong> {c.rubric}
          </p>
        )
        : null}
      <h4>Answer</h4>
      {c.answer === null
        ? <p class="muted">No answer.</p>
        : <pre class="text" aria-label={`Answer of ${label}`}>{c.answer}</pre>}
      {c.error ? <p class="error-text">{`${c.error.code}: ${c.error.message}`}</p> : null}
      <table class="scores">
        <caption>{`Scores of ${label}`}</caption>
        <Head cols={["Scorer", "Score", "Passed", "Value", "Reasoning"]} />
        <tbody>
          {c.scores.map((s) => (
            <tr>
              <th scope="row">{s.scorer}</th>
              <td>{formatScore(s.score)}</td>
              <td>{s.passed ? "yes" : "no"}</td>
              <td>{formatValue(s.value, s.scorer)}</td>
              <td>
                {s.reasoning ?? ""}
                {s.error ? <span class="error-text">{` ${s.error.code}: ${s.error.message}`}</span> : null}
                {s.judge
                  ? <span class="muted">{` (judge ${s.judge.model}, ${s.judge.total_tokens} tokens)`}</span>
                  : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>Tool calls</h4>
      {c.tool_calls.length === 0 ? <p class="muted">None.</p> : (
        <ol class="calls">
          {c.tool_calls.map((t) => (
            <li>
              <code>{t.name}</code> <Badge status={t.status} />
              {t.error ? <span class="error-text">{` ${t.error}`}</span> : null}
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}

/** The cases as a table (each linked to its drill-down below), then the drill-downs. */
export function CaseList(props: { run: EvalRun; runLink?: RunLink }) {
  const cases = props.run.cases ?? [];
  if (cases.length === 0) return <p class="muted">No case has run yet.</p>;
  return (
    <>
      <table class="cases">
        <caption>Cases (open one below for its task, answer, scores and tool calls)</caption>
        <Head cols={["Case", "Status", "Score", "Tokens", "Cost", "Duration", "Tools"]} />
        <tbody>
          {cases.map((c) => (
            <tr>
              <th scope="row">
                <a href={`#case-${c.index}-${c.repeat}`}>{caseLabel(c, props.run.repeat)}</a>
              </th>
              <td>
                <Badge status={c.status} />
              </td>
              <td>{formatScore(c.score)}</td>
              <td>{c.total_tokens}</td>
              <td>{formatUsd(c.cost_usd)}</td>
              <td>{ms(c.duration_ms)}</td>
              <td>{c.tool_calls.map((t) => t.name + (t.error ? "!" : "")).join(", ") || "–"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="drilldown">
        {cases.map((c) => (
          <CaseDetails key={`${c.index}-${c.repeat}`} run={props.run} case={c} runLink={props.runLink} />
        ))}
      </div>
    </>
  );
}

/** A comparison of two eval runs: the pass rate, each scorer's delta, the cases that got worse. */
export function CompareTables(props: { compare: EvalCompare }) {
  const k = props.compare;
  return (
    <>
      <p>
        {`Pass rate ${formatRate(k.pass_rate.base)} → ${formatRate(k.pass_rate.head)} (${
          formatDelta(k.pass_rate.delta)
        }); threshold ${k.max_regression}: `}
        <Badge status={k.regressed ? "regressed" : "passed"} />
      </p>
      <table class="compare">
        <caption>{`Scorers, ${k.base_eval_id} → ${k.head_eval_id}`}</caption>
        <Head
          cols={[
            "Scorer",
            "Base mean",
            "Head mean",
            "Delta",
            "Base pass",
            "Head pass",
            "Pass delta",
            "Regressed",
          ]}
        />
        <tbody>
          {k.scorers.map((s) => (
            <tr class={s.regressed ? "regressed" : undefined}>
              <th scope="row">{s.scorer}</th>
              <td>{formatScore(s.base_mean)}</td>
              <td>{formatScore(s.head_mean)}</td>
              <td>{formatDelta(s.delta)}</td>
              <td>{formatRate(s.base_pass_rate)}</td>
              <td>{formatRate(s.head_pass_rate)}</td>
              <td>{formatDelta(s.pass_rate_delta)}</td>
              <td>{s.regressed ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Cases that got worse</h3>
      {k.regressed_cases.length === 0 ? <p class="muted">None.</p> : (
        <table class="compare-cases">
          <caption>Regressed cases</caption>
          <Head cols={["Case", "Base score", "Head score", "Delta", "Base passed", "Head passed"]} />
          <tbody>
            {k.cases.filter((c) => c.regressed).map((c) => (
              <tr>
                <th scope="row">{c.case_id}</th>
                <td>{formatScore(c.base_score)}</td>
                <td>{formatScore(c.head_score)}</td>
                <td>{formatDelta(c.delta)}</td>
                <td>{c.base_passed ? "yes" : "no"}</td>
                <td>{c.head_passed ? "yes" : "no"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {k.only_in_base.length || k.only_in_head.length
        ? (
          <p class="muted">
            {`Only in base: ${k.only_in_base.join(", ") || "none"}. Only in head: ${
              k.only_in_head.join(", ") || "none"
            }.`}
          </p>
        )
        : null}
    </>
  );
}
