import type { Context, Hono } from "hono";
import type { EvalRun } from "../../contract/evals.ts";
import type { StationContext } from "../../context.ts";
import { formatUsd } from "../../telemetry/cost.ts";
import { DistributionCharts } from "../../reports/eval_charts.tsx";
import { evalReportHtml } from "../../reports/eval_html.tsx";
import { evalReportMarkdown } from "../../reports/eval_markdown.ts";
import {
  Badge,
  CaseList,
  CompareTables,
  EvalFacts,
  type RunLink,
  ScorerTable,
  ToolTable,
} from "../../reports/eval_parts.tsx";
import { distributions, formatRate, formatScore } from "../../reports/eval_stats.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { OlderRuns, type RunListPage } from "../run_filter.tsx";
import { Time } from "../parts.tsx";

/**
 * /ui/evals: the eval runs (docs/evals.md), one eval run as its report shows it (aggregates, score charts, tool
 * effectiveness, each case's drill-down, its runs linked), the comparison of two, and the report files.
 */
export function addEvalRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/evals", (c) => {
    const target = c.req.query("target") || undefined;
    const cursor = c.req.query("cursor") || undefined;
    const rows = ctx.evals.ledger.list({ target, cursor, limit: PAGE });
    const runs = rows.map((r) => ctx.evals.view(r.id, false));
    const next = rows.length === PAGE ? rows[rows.length - 1].id : null;
    return c.html(
      <Layout title="Eval runs" section="evals" page={page(c)}>
        <EvalRunTable runs={runs} />
        <OlderRuns list={LIST} filter={{ name: target }} next={next} label="Older eval runs" />
        {runs.length > 1 ? <CompareForm runs={runs} /> : null}
      </Layout>,
    );
  });
  ui.get("/evals/compare", (c) => {
    const base = c.req.query("base") ?? "", head = c.req.query("head") ?? "";
    const compare = ctx.evals.compare(base, head, maxRegression(c.req.query("max_regression")));
    return c.html(
      <Layout title={`Compare ${base} → ${head}`} section="evals" page={page(c)}>
        <p>
          Base <a href={`/ui/evals/${base}`}>{base}</a>, head <a href={`/ui/evals/${head}`}>{head}</a>.
        </p>
        <CompareTables compare={compare} />
      </Layout>,
    );
  });
  ui.get("/evals/:id/report", async (c) => {
    const run = ctx.evals.view(c.req.param("id"));
    return c.req.query("format") === "md"
      ? c.body(evalReportMarkdown(run), 200, download(run, "md", "text/markdown; charset=utf-8"))
      : c.body(await evalReportHtml(run), 200, download(run, "html", "text/html; charset=utf-8"));
  });
  ui.get("/evals/:id", (c) => {
    const run = ctx.evals.view(c.req.param("id"));
    const others = ctx.evals.ledger.list({ target: run.target, limit: PAGE }).filter((r) =>
      r.id !== run.eval_id
    )
      .map((r) => ctx.evals.view(r.id, false));
    const compare = run.baseline?.compare;
    return c.html(
      <Layout title={`Eval run ${run.eval_id}`} section="evals" page={page(c)}>
        <EvalFacts run={run} />
        <p>
          Report: <a href={`/ui/evals/${run.eval_id}/report`}>HTML</a> ·{" "}
          <a href={`/ui/evals/${run.eval_id}/report?format=md`}>Markdown</a>
        </p>
        {others.length ? <CompareForm runs={others} head={run.eval_id} /> : null}
        {compare
          ? (
            <>
              <h2>{`Compared with ${compare.base_eval_id}`}</h2>
              <CompareTables compare={compare} />
            </>
          )
          : null}
        <h2>Aggregates</h2>
        <ScorerTable run={run} />
        <h2>Score distributions</h2>
        <DistributionCharts distributions={distributions(run, run.cases ?? [])} />
        <h2>Tools</h2>
        <ToolTable run={run} />
        <h2>Cases</h2>
        <CaseList run={run} runLink={runLink} />
      </Layout>,
    );
  });
}

const PAGE = 50;
const LIST: RunListPage = { path: "/ui/evals", key: "target" };

/** A case's run on the dashboard: its agent run's page, or its workflow run's. */
const runLink: RunLink = (c, kind) =>
  c.run_id ? `/ui/${kind === "agent" ? "agent-runs" : "runs"}/${encodeURIComponent(c.run_id)}` : undefined;

/** ?max_regression=, a fraction in [0, 1] (default 0.05, as `stn eval compare`). */
function maxRegression(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && value !== "" && n >= 0 && n <= 1 ? n : 0.05;
}

function download(run: EvalRun, ext: string, type: string): Record<string, string> {
  return {
    "content-type": type,
    "content-disposition": `attachment; filename="${run.eval_id}.${ext}"`,
  };
}

function EvalRunTable(props: { runs: EvalRun[] }) {
  if (props.runs.length === 0) {
    return <p class="muted">No eval runs yet: `stn eval run &lt;agent&gt; --dataset FILE` starts one.</p>;
  }
  return (
    <table>
      <caption>Eval runs, newest first</caption>
      <thead>
        <tr>
          {["Eval run", "Target", "Dataset", "Status", "Cases", "Pass rate", "Mean score", "Cost", "Started"]
            .map((
              h,
            ) => (
              <th scope="col">
                {h}
              </th>
            ))}
        </tr>
      </thead>
      <tbody>
        {props.runs.map((r) => (
          <tr>
            <td>
              <a href={`/ui/evals/${r.eval_id}`}>
                <code>{r.eval_id}</code>
              </a>
            </td>
            <td>
              <a href={`/ui/evals?target=${encodeURIComponent(r.target)}`}>{r.target}</a>
              <span class="muted">{` ${r.kind}`}</span>
            </td>
            <td>{r.dataset.name}</td>
            <td>
              <Badge status={r.status} />
            </td>
            <td>{`${r.cases_done}/${r.cases_total}`}</td>
            <td>{formatRate(r.aggregates.pass_rate)}</td>
            <td>{formatScore(r.aggregates.mean_score)}</td>
            <td>{formatUsd(r.cost_usd)}</td>
            <td>
              <Time iso={r.created_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Picks two eval runs to compare (GET /ui/evals/compare): `head` fixed when given (one run's page). */
function CompareForm(props: { runs: EvalRun[]; head?: string }) {
  const choices = (id: string, label: string, selected?: string) => (
    <div>
      <label for={id}>{label}</label>
      <select id={id} name={id}>
        {props.runs.map((r) => (
          <option value={r.eval_id} selected={r.eval_id === selected}>
            {`${r.eval_id} · ${r.target} · ${formatRate(r.aggregates.pass_rate)}`}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <form method="get" action="/ui/evals/compare" class="compare" aria-label="Compare eval runs">
      {choices("base", "Base", props.runs[props.head ? 0 : 1]?.eval_id)}
      {props.head
        ? <input type="hidden" name="head" value={props.head} />
        : choices("head", "Head", props.runs[0]?.eval_id)}
      <button type="submit">Compare</button>
    </form>
  );
}
