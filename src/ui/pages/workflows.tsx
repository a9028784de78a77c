/** /ui/workflows and /ui/workflows/:id: stored workflows, their graph, and starting a run. */

import type { Context, Hono } from "hono";
import type { StationContext } from "../../context.ts";
import { StateGraph } from "../graph_svg.tsx";
import { Layout, type PageContext } from "../layout.tsx";
import { ApiForm, Json, Status, Time } from "../parts.tsx";

/** An input to start with: the schema's example or defaults when it has them, else an empty object. */
function sampleInput(schema: Record<string, unknown> | undefined): string {
  const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const sample: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(props)) {
    if (p.default !== undefined) sample[name] = p.default;
    else if (Array.isArray(p.examples) && p.examples.length) sample[name] = p.examples[0];
  }
  return JSON.stringify(sample, null, 2);
}

/** /ui/workflows and /ui/workflows/:id: definitions, versions, the state graph, and starting a run. */
export function addWorkflowRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/workflows", (c) => {
    const workflows = ctx.workflows.list();
    return c.html(
      <Layout title="Workflows" section="workflows" page={page(c)}>
        {workflows.length === 0
          ? (
            <div class="empty">
              <p>No workflows stored yet.</p>
              <p class="muted">
                Put <code>*.workflow.yaml</code> files in an environment's <code>workflows/</code>{" "}
                folder and run <code>stn sync</code>, or store one file with{" "}
                <code>stn workflow apply my.workflow.yaml</code> (<code>examples/workflows/</code>{" "}
                has a dozen to start from).
              </p>
            </div>
          )
          : (
            <table>
              <caption>Stored workflows</caption>
              <thead>
                <tr>
                  <th scope="col">Workflow</th>
                  <th scope="col">Name</th>
                  <th scope="col">Version</th>
                  <th scope="col">Status</th>
                  <th scope="col">Source</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {workflows.map((w) => (
                  <tr>
                    <td>
                      <a href={`/ui/workflows/${encodeURIComponent(w.id)}`}>{w.id}</a>
                    </td>
                    <td>{w.name ?? ""}</td>
                    <td>v{w.version}</td>
                    <td>
                      <Status status={w.status} />
                    </td>
                    <td>{w.source_path ?? w.source}</td>
                    <td>
                      <Time iso={w.updated_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </Layout>,
    );
  });

  ui.get("/workflows/:id", (c) => {
    const id = c.req.param("id");
    const record = ctx.workflows.record(id);
    const asked = /^\d+$/.test(c.req.query("version") ?? "") ? Number(c.req.query("version")) : undefined;
    const shown = ctx.workflows.get(id, asked);
    const def = shown.definition;
    const runs = ctx.runs.list({ workflowId: id, limit: 10 }).runs;
    const path = `/ui/workflows/${encodeURIComponent(id)}`;
    return c.html(
      <Layout title={`Workflow ${record.id}`} section="workflows" page={page(c)}>
        {record.description ? <p>{record.description}</p> : null}
        <p>
          <Status status={record.status} /> · showing version {shown.version} of {record.version}
        </p>
        <h2>State graph</h2>
        {/* StateGraph reads any definition's states as plain records (State is an interface, no index). */}
        <StateGraph definition={def as unknown as { start?: string; states: Record<string, unknown>[] }} />
        <h2>Start a run</h2>
        {record.status === "disabled"
          ? <p class="muted">This workflow is disabled; enable it to start runs.</p>
          : (
            <ApiForm
              action={`/api/v1/workflows/${encodeURIComponent(id)}/runs`}
              json="input version"
              then="/ui/runs/{id}"
              label="Start a run"
            >
              <input type="hidden" name="version" value={String(shown.version)} />
              <div class="field">
                <label for="input">Input (JSON, checked against the workflow's input schema)</label>
                <textarea id="input" name="input" rows={4} aria-describedby="input-help">
                  {sampleInput(def.inputSchema as Record<string, unknown> | undefined)}
                </textarea>
                <p id="input-help" class="muted">
                  {def.inputSchema ? "The schema is shown below." : "This workflow declares no input schema."}
                </p>
              </div>
              <button type="submit">Start run of v{shown.version}</button>
            </ApiForm>
          )}
        {def.inputSchema
          ? (
            <>
              <h2>Input schema</h2>
              <Json value={def.inputSchema} label="Input schema" />
            </>
          )
          : null}
        <h2>Recent runs</h2>
        {runs.length === 0 ? <p class="muted">No runs yet.</p> : (
          <ul>
            {runs.map((r) => (
              <li>
                <a href={`/ui/runs/${r.id}`}>
                  <code>{r.id}</code>
                </a>{" "}
                <Status status={r.status} /> <Time iso={r.created_at} />
              </li>
            ))}
          </ul>
        )}
        <h2>Versions</h2>
        <ul>
          {ctx.workflows.versions(id).map((v) => (
            <li>
              <a
                href={`${path}?version=${v.version}`}
                aria-current={v.version === shown.version ? "true" : undefined}
              >
                v{v.version}
              </a>{" "}
              <Time iso={v.created_at} /> <code class="muted">{v.hash.slice(0, 12)}</code>
            </li>
          ))}
        </ul>
        <h2>Definition (v{shown.version})</h2>
        <Json value={def} label={`Definition of version ${shown.version}`} />
      </Layout>,
    );
  });
}
