/**
 * `stn eval report` to a .html file: an eval run as one self-contained HTML file — its styles inline, its
 * charts inline SVG, no script and no external asset — so it opens anywhere, offline, and can be attached to
 * a pull request or mailed.
 */

import { raw } from "hono/html";
import type { EvalRun } from "../contract/evals.ts";
import { VERSION } from "../version.ts";
import { DistributionCharts } from "./eval_charts.tsx";
import { CaseList, CompareTables, EvalFacts, ScorerTable, ToolTable } from "./eval_parts.tsx";
import { distributions } from "./eval_stats.ts";

/** Marks a file as a report stn wrote (`stn eval report` overwrites only those). */
export const REPORT_MARK_HTML = '<meta name="generator" content="stn eval report">';

const STYLE = `
:root { --fg:#1b1f24; --muted:#57606a; --panel:#f6f8fa; --line:#d0d7de; --accent:#0a58ca; --ok:#116329;
  --bad:#b42318; --warn:#7a4d00; font-family:system-ui,-apple-system,"Segoe UI",sans-serif; color:var(--fg);
  line-height:1.45; }
body { margin:0; }
main { padding:1rem 1.5rem 3rem; max-width:1200px; }
a { color:var(--accent); }
h1 { font-size:1.5rem; } h2 { font-size:1.15rem; margin-top:2rem; } h4 { margin:0.8rem 0 0.3rem; }
table { border-collapse:collapse; width:100%; font-size:0.92rem; margin-bottom:1rem; }
caption { text-align:left; color:var(--muted); padding-bottom:0.3rem; }
th, td { text-align:left; padding:0.35rem 0.5rem; border-bottom:1px solid var(--line); vertical-align:top; }
thead th { background:var(--panel); }
code, pre { font-family:ui-monospace,"SFMono-Regular",Menlo,monospace; font-size:0.85rem; }
pre.text { background:var(--panel); border:1px solid var(--line); padding:0.5rem; white-space:pre-wrap;
  overflow:auto; max-height:20rem; margin:0; }
.muted { color:var(--muted); }
.error-text { color:var(--bad); }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:0.2rem 1rem; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; }
.status { display:inline-block; padding:0 0.45rem; border-radius:0.8rem; font-size:0.8rem; border:1px solid; }
.status-passed, .status-completed { color:var(--ok); }
.status-failed, .status-error, .status-regressed, .status-canceled { color:var(--bad); }
.status-running, .status-pending { color:var(--warn); }
.charts { display:flex; flex-wrap:wrap; gap:1rem; }
figure.chart { margin:0; border:1px solid var(--line); padding:0.5rem; }
figure.chart figcaption { color:var(--muted); font-size:0.85rem; text-align:center; }
details.case { border:1px solid var(--line); margin:0.4rem 0; padding:0.3rem 0.7rem; }
details.case[open] { padding-bottom:0.8rem; }
details.case summary { cursor:pointer; }
tr.regressed th, tr.regressed td { background:#fdecea; }
footer { color:var(--muted); font-size:0.85rem; margin-top:2rem; }
`;

/** The whole report of an eval run (its `cases` included) as an HTML document. */
export async function evalReportHtml(run: EvalRun, generatedAt = new Date()): Promise<string> {
  const cases = run.cases ?? [];
  const compare = run.baseline?.compare;
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="generator" content="stn eval report" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`Eval ${run.eval_id}: ${run.target}`}</title>
        <style>{raw(STYLE)}</style>
      </head>
      <body>
        <main>
          <h1>{`Eval report: ${run.target}`}</h1>
          <p class="muted">
            <code>{run.eval_id}</code>
          </p>
          <EvalFacts run={run} />
          {compare
            ? (
              <section aria-labelledby="baseline">
                <h2 id="baseline">{`Compared with ${compare.base_eval_id}`}</h2>
                <CompareTables compare={compare} />
              </section>
            )
            : null}
          <section aria-labelledby="aggregates">
            <h2 id="aggregates">Aggregates</h2>
            <ScorerTable run={run} />
          </section>
          <section aria-labelledby="distributions">
            <h2 id="distributions">Score distributions</h2>
            <DistributionCharts distributions={distributions(run, cases)} />
          </section>
          <section aria-labelledby="tools">
            <h2 id="tools">Tools</h2>
            <ToolTable run={run} />
          </section>
          <section aria-labelledby="cases">
            <h2 id="cases">Cases</h2>
            <CaseList run={run} />
          </section>
          <footer>{`Written by stn ${VERSION} at ${generatedAt.toISOString()}.`}</footer>
        </main>
      </body>
    </html>
  );
  return `<!DOCTYPE html>\n${await page.toString()}`;
}
