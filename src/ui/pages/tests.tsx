import type { Context, Hono } from "hono";
import type { TestRun } from "../../contract/tests.ts";
import { StationError } from "../../errors.ts";
import type { StationContext } from "../../context.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { formatDuration, Status, Time } from "../parts.tsx";

/** /ui/tests: the station's last test runs (POST /api/v1/tests, `stn test --station`), and one run's cases. */
export function addTestRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/tests", (c) =>
    c.html(
      <Layout title="Test runs" section="tests" page={page(c)}>
        <TestRunTable runs={ctx.tests.list()} />
      </Layout>,
    ));
  ui.get("/tests/:id", (c) => {
    const run = ctx.tests.get(c.req.param("id"));
    if (!run) throw new StationError("test_run_not_found", "no test run with that id", { status: 404 });
    return c.html(
      <Layout title={`Test run ${run.id}`} section="tests" page={page(c)}>
        <p>
          Environment <code>{run.environment}</code>, <Status status={run.status} />,{" "}
          {run.summary.passed}/{run.summary.total} passed in {formatDuration(run.duration_ms)}.
        </p>
        <CaseTable run={run} />
        <CoverageTable run={run} />
      </Layout>,
    );
  });
}

function TestRunTable(props: { runs: TestRun[] }) {
  if (props.runs.length === 0) {
    return (
      <p class="muted">
        No test runs yet: <code>stn test --station URL</code> or <code>POST /api/v1/tests</code>{" "}
        runs them here.
      </p>
    );
  }
  return (
    <table>
      <caption>Test runs, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Environment</th>
          <th scope="col">Status</th>
          <th scope="col">Passed</th>
          <th scope="col">Started</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {props.runs.map((r) => (
          <tr>
            <td>
              <a href={`/ui/tests/${r.id}`}>{r.id}</a>
            </td>
            <td>{r.environment}</td>
            <td>
              <Status status={r.status} />
            </td>
            <td>{r.summary.passed}/{r.summary.total}</td>
            <td>
              <Time iso={r.started_at} />
            </td>
            <td>{formatDuration(r.duration_ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CaseTable(props: { run: TestRun }) {
  return (
    <table>
      <caption>Cases</caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          <th scope="col">Runs</th>
          <th scope="col">Result</th>
          <th scope="col">Failures</th>
        </tr>
      </thead>
      <tbody>
        {props.run.cases.map((k) => (
          <tr>
            <td>
              {k.file} › {k.name}
            </td>
            <td>
              {k.kind} <code>{k.target}</code> {k.run_id
                ? (
                  <a href={k.kind === "workflow" ? `/ui/runs/${k.run_id}` : `/ui/agent-runs/${k.run_id}`}>
                    run
                  </a>
                )
                : null}
            </td>
            <td>
              <Status status={k.status} />
            </td>
            <td>
              {k.failures.map((f) => (
                <div>
                  <strong>{f.assertion}</strong>: {f.message}
                  {f.diff ? <pre>{f.diff}</pre> : null}
                </div>
              ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CoverageTable(props: { run: TestRun }) {
  if (props.run.coverage.length === 0) return null;
  return (
    <table>
      <caption>Workflow coverage</caption>
      <thead>
        <tr>
          <th scope="col">Workflow</th>
          <th scope="col">Coverage</th>
          <th scope="col">States not visited</th>
          <th scope="col">Branches not taken</th>
        </tr>
      </thead>
      <tbody>
        {props.run.coverage.map((w) => (
          <tr>
            <td>
              <a href={`/ui/workflows/${w.workflow}`}>{w.workflow}</a>
            </td>
            <td>{w.percent}%</td>
            <td>{w.states.filter((s) => !w.visited.includes(s)).join(", ") || "—"}</td>
            <td>{w.branches.filter((b) => !w.taken.includes(b)).join(", ") || "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
