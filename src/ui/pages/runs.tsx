import type { Context, Hono } from "hono";
import { RunStatus } from "../../contract/runs.ts";
import type { StationContext } from "../../runtime/context.ts";
import { type RunView, runView } from "../../workflows/engine/views.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { formatDuration, span, Status, Time } from "../parts.tsx";

interface RunFilter {
  workflow?: string;
  status?: RunStatus;
  cursor?: string;
}

function filterOf(q: Record<string, string>): RunFilter {
  const status = RunStatus.safeParse(q.status);
  return {
    workflow: q.workflow || undefined,
    status: status.success ? status.data : undefined,
    cursor: q.cursor || undefined,
  };
}

function query(f: RunFilter): string {
  const p = new URLSearchParams();
  if (f.workflow) p.set("workflow", f.workflow);
  if (f.status) p.set("status", f.status);
  if (f.cursor) p.set("cursor", f.cursor);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** The runs table (also the fragment htmx polls for live updates). */
function RunTable(props: { runs: RunView[]; next: string | null; filter: RunFilter }) {
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
      {props.next
        ? <a href={`/ui/runs${query({ ...props.filter, cursor: props.next })}`}>Older runs</a>
        : null}
    </>
  );
}

function readRuns(ctx: StationContext, f: RunFilter) {
  const page = ctx.engine.reads.runs.list({
    workflowId: f.workflow,
    status: f.status,
    cursor: f.cursor,
    limit: 50,
  });
  return { runs: page.runs.map(runView), next: page.nextCursor ?? null };
}

/** /ui/runs: every run, filtered by workflow and status, refreshed every two seconds. */
export function addRunListRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/runs/rows", (c) => {
    const f = filterOf(c.req.query());
    const { runs, next } = readRuns(ctx, f);
    return c.html(<RunTable runs={runs} next={next} filter={f} />);
  });
  ui.get("/runs", (c) => {
    const f = filterOf(c.req.query());
    const { runs, next } = readRuns(ctx, f);
    const workflows = ctx.workflows.list().map((w) => w.id);
    return c.html(
      <Layout title="Runs" section="runs" page={page(c)}>
        <form method="get" action="/ui/runs" class="filters" aria-label="Filter runs">
          <div>
            <label for="workflow">Workflow</label>
            <select id="workflow" name="workflow">
              <option value="">any</option>
              {workflows.map((id) => <option key={id} value={id} selected={id === f.workflow}>{id}</option>)}
            </select>
          </div>
          <div>
            <label for="status">Status</label>
            <select id="status" name="status">
              <option value="">any</option>
              {RunStatus.options.map((s) => <option key={s} value={s} selected={s === f.status}>{s}</option>)}
            </select>
          </div>
          <button type="submit">Filter</button>
        </form>
        <div
          id="runs"
          hx-get={`/ui/runs/rows${query(f)}`}
          hx-trigger="every 2s"
        >
          <RunTable runs={runs} next={next} filter={f} />
        </div>
      </Layout>,
    );
  });
}
