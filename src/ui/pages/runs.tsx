/** /ui/runs: the workflow runs, searched by run id, workflow, status and time, refreshed every two seconds. */

import type { Context, Hono } from "hono";
import { encodeTime } from "ulid";
import { RunStatus } from "../../contract/runs.ts";
import type { StationContext } from "../../context.ts";
import { type RunView, runView } from "../../workflows/engine/mod.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { formatDuration, span, Status, StepErrorText, Time } from "../parts.tsx";
import {
  filtered,
  OlderRuns,
  type RunFilter,
  runFilter,
  RunFilterForm,
  runQuery,
  utcTime,
} from "../run_filter.tsx";

const list = { path: "/ui/runs", key: "workflow" };
type Filter = RunFilter<RunStatus>;

/** The runs table (also the fragment htmx polls for live updates). */
function RunTable(props: { runs: RunView[]; next: string | null; filter: Filter }) {
  if (props.runs.length === 0) return <NoRuns filter={props.filter} />;
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
            <th scope="col">Error</th>
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
              <td>
                <StepErrorText error={r.error} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <OlderRuns list={list} filter={props.filter} next={props.next} label="Older runs" />
    </>
  );
}

/** An empty list says why: nothing matches the search, or there is no run yet and how to start one. */
function NoRuns(props: { filter: Filter }) {
  if (filtered(props.filter)) {
    return (
      <p class="muted">
        No runs match this search. <a href={list.path}>Show every run</a>.
      </p>
    );
  }
  return (
    <div class="empty">
      <p>No runs yet.</p>
      <p class="muted">
        Start one from a workflow's page (<a href="/ui/workflows">Workflows</a>), or from a shell:{" "}
        <code>stn run WORKFLOW --input '{"{…}"}'</code> for a stored workflow,{" "}
        <code>stn run ./my.workflow.yaml</code> for a file. Runs show up here as they start.
      </p>
    </div>
  );
}

/** The lowest run id created at `ms` (run ids are ULIDs: their first 10 characters are the time). */
const idAt = (ms: number) => `${encodeTime(ms, 10)}${"0".repeat(16)}`;

function readRuns(ctx: StationContext, f: Filter) {
  if (f.run) {
    const found = ctx.runs.get(f.run);
    const match = found && (!f.name || found.workflow_id === f.name) &&
      (!f.status || found.status === f.status);
    return { runs: match ? [runView(found)] : [], next: null };
  }
  const from = utcTime(f.from);
  const until = utcTime(f.until);
  const bound = until === undefined ? undefined : idAt(until);
  const cursor = f.cursor && bound ? (f.cursor < bound ? f.cursor : bound) : f.cursor ?? bound;
  const page = ctx.runs.list({
    workflowId: f.name,
    status: f.status,
    cursor,
    minId: from === undefined ? undefined : idAt(from),
    limit: 50,
  });
  return { runs: page.runs, next: page.nextCursor ?? null };
}

/** /ui/runs: every run, searched by run id, workflow, status and time, refreshed every two seconds. */
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
          label="Search runs"
          nameLabel="Workflow"
          names={workflows}
          statuses={RunStatus.options}
          search
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
