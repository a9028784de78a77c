/** /ui/runs: the workflow runs, filtered by workflow and status, refreshed every two seconds. */

import type { Context, Hono } from "hono";
import { RunStatus } from "../../contract/runs.ts";
import type { StationContext } from "../../context.ts";
import type { RunView } from "../../workflows/engine/mod.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { formatDuration, span, Status, Time } from "../parts.tsx";
import { OlderRuns, type RunFilter, runFilter, RunFilterForm, runQuery } from "../run_filter.tsx";

const list = { path: "/ui/runs", key: "workflow" };
type Filter = RunFilter<RunStatus>;

/** The runs table (also the fragment htmx polls for live updates). */
function RunTable(props: { runs: RunView[]; next: string | null; filter: Filter }) {
  if (props.runs.length === 0) return <p class="muted">No runs match.</p>;
  return (
    <>
      <table>
        <caption>Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {props.runs.map((r) => (
            <tr>
              <td>
                <a href={`/ui/runs/${r.id}`}>
                  <code>{r.id}</code>
                </a>
              </td>
              <td>
                <a href={`/ui/workflows/${encodeURIComponent(r.workflow_id)}`}>{r.workflow_id}</a>
                {r.workflow_version ? <span class="muted">{` v${r.workflow_version}`}</span> : null}
              </td>
              <td>
                <Status status={r.status} />
              </td>
              <td>
                <Time iso={r.created_at} />
              </td>
              <td>{formatDuration(span(r.started_at, r.completed_at))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <OlderRuns list={list} filter={props.filter} next={props.next} label="Older runs" />
    </>
  );
}

function readRuns(ctx: StationContext, f: Filter) {
  const page = ctx.runs.list({ workflowId: f.name, status: f.status, cursor: f.cursor, limit: 50 });
  return { runs: page.runs, next: page.nextCursor ?? null };
}

/** /ui/runs: every run, filtered by workflow and status, refreshed every two seconds. */
export function addRunListRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/runs/rows", (c) => {
    const f = runFilter(list, c.req.query(), RunStatus.options);
    const { runs, next } = readRuns(ctx, f);
    return c.html(<RunTable runs={runs} next={next} filter={f} />);
  });
  ui.get("/runs", (c) => {
    const f = runFilter(list, c.req.query(), RunStatus.options);
    const { runs, next } = readRuns(ctx, f);
    const workflows = ctx.workflows.list().map((w) => w.id);
    return c.html(
      <Layout title="Runs" section="runs" page={page(c)}>
        <RunFilterForm
          list={list}
          filter={f}
          label="Filter runs"
          nameLabel="Workflow"
          names={workflows}
          statuses={RunStatus.options}
        />
        <div
          id="runs"
          hx-get={`/ui/runs/rows${runQuery(list, f)}`}
          hx-trigger="every 2s"
        >
          <RunTable runs={runs} next={next} filter={f} />
        </div>
      </Layout>,
    );
  });
}
