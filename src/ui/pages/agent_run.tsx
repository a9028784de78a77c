/** /ui/agent-runs/:id: an agent run's page, its live fragment and its events. */

import type { Context, Hono } from "hono";
import { type AgentRun, describeWait } from "../../contract/agent_runs.ts";
import { StationError } from "../../errors.ts";
import { formatUsd } from "../../telemetry/cost.ts";
import { followAgentRunEvents } from "../../events/agent_run_events.ts";
import { streamRunEvents } from "../../events/sse.ts";
import type { StationContext } from "../../context.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { ApiForm, formatDuration, Json, span, Time } from "../parts.tsx";
import { AgentStatus, StartedBy } from "./agent_runs.tsx";

type ToolCall = AgentRun["tool_calls"][number];
type Usage = AgentRun["usage"];

function requireView(ctx: StationContext, id: string): AgentRun {
  const row = ctx.agentRuns.get(id);
  if (!row) {
    throw new StationError("agent_run_not_found", `no agent run ${id}`, {
      hint: "the agent runs page lists every run",
    });
  }
  return ctx.agentRuns.view(row, true);
}

/** Token counts as one line: in, out, cached, total. */
function tokens(u: Usage): string {
  return `${u.input_tokens} in · ${u.output_tokens} out · ${u.cached_tokens} cached · ${u.total_tokens} total`;
}

function UsageTable(props: { usage: Usage; cost: number | null }) {
  const u = props.usage;
  return (
    <table class="usage">
      <caption>Token usage</caption>
      <thead>
        <tr>
          <th scope="col">Input</th>
          <th scope="col">Output</th>
          <th scope="col">Cached</th>
          <th scope="col">Total</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <td>{u.input_tokens}</td>
          <td>{u.output_tokens}</td>
          <td>{u.cached_tokens}</td>
          <td>{u.total_tokens}</td>
          <td>{formatUsd(props.cost)}</td>
        </tr>
      </tbody>
    </table>
  );
}

/**
 * The tool calls of one turn (docs/agents.md#tool-calls): the server that served each, its status and times,
 * its input and output (the first 2 KB, a link to all of it) to expand, and its error.
 */
function ToolCalls(props: { ctx: StationContext; runId: string; turn: number; calls: ToolCall[] }) {
  if (props.calls.length === 0) return null;
  return (
    <table>
      <caption>Tool calls of turn {props.turn}</caption>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Server</th>
          <th scope="col">Status</th>
          <th scope="col">Started</th>
          <th scope="col">Ended</th>
          <th scope="col">Duration</th>
          <th scope="col">Input and output</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {props.calls.map((c) => {
          const child = props.ctx.agentRuns.child(props.runId, c.call_id);
          const id = `${c.name} (${c.call_id})`;
          return (
            <tr>
              <td>
                <code>{c.name}</code>
                {child
                  ? (
                    <div>
                      <a href={`/ui/agent-runs/${child.id}`}>{child.id}</a>
                    </div>
                  )
                  : null}
              </td>
              <td>{c.server ?? <span class="muted">—</span>}</td>
              <td>
                <span class={`status status-${c.status}`}>{c.status}</span>
              </td>
              <td>
                <Time iso={c.started_at} />
              </td>
              <td>
                <Time iso={c.ended_at} />
              </td>
              <td>{formatDuration(c.duration_ms)}</td>
              <td>
                <details>
                  <summary>Input</summary>
                  <Json value={c.arguments} label={`Input of ${id}`} />
                </details>
                <details>
                  <summary>
                    Output · {c.output_bytes === null ? "—" : `${c.output_bytes} bytes`}{" "}
                    {c.truncated ? <span class="status status-waiting">truncated</span> : null}
                    {c.removed_at_turn !== null
                      ? <span class="muted">{` removed from the context at turn ${c.removed_at_turn}`}</span>
                      : null}
                  </summary>
                  <pre class="text" tabindex={0} aria-label={`Output of ${id}`}>{c.output ?? ""}</pre>
                  {c.output_partial
                    ? (
                      <a
                        class="full-output"
                        href={`/api/v1/agent-runs/${props.runId}/tool-calls/${encodeURIComponent(c.call_id)}`}
                      >
                        The whole output (JSON)
                      </a>
                    )
                    : null}
                </details>
              </td>
              <td>{c.error ? <span class="error-text">{c.error}</span> : null}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The parts of an agent run's page that change: status, cancel, usage, turns with their tool calls, answer. */
function Live(props: { ctx: StationContext; id: string }) {
  const run = requireView(props.ctx, props.id);
  const error = run.error as { code: string; message: string } | null;
  return (
    <>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <AgentStatus run={run} />
          {run.waiting_for ? ` — waiting for ${describeWait(run.waiting_for)}` : ""}
        </dd>
        <dt>Agent</dt>
        <dd>
          <a href={`/ui/agent-runs?agent=${encodeURIComponent(run.agent)}`}>{run.agent}</a>
          <span class="muted">{` ${run.environment}`}</span>
        </dd>
        <dt>Model</dt>
        <dd>
          <code>{run.model}</code>
        </dd>
        <dt>Started by</dt>
        <dd>
          <StartedBy run={run} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={run.started_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(run.duration_ms ?? span(run.started_at, run.ended_at))}</dd>
        {run.queue
          ? (
            <>
              <dt>Queue</dt>
              <dd>
                <code>{run.queue}</code>
                <span class="muted">
                  {run.status === "queued" ? "" : ` worker ${run.owner ?? "-"}`}
                </span>
              </dd>
            </>
          )
          : null}
        {run.trace_id
          ? (
            <>
              <dt>Trace</dt>
              <dd>
                <code>{run.trace_id}</code>
              </dd>
            </>
          )
          : null}
      </dl>
      {error
        ? (
          <div class="error" role="alert">
            <strong>Agent run {run.status}:</strong>{" "}
            <span class="error-text">
              <code>{error.code}</code> {error.message}
            </span>
          </div>
        )
        : null}
      {run.status === "running" || run.status === "queued" || run.status === "waiting_for_concurrency"
        ? (
          <div class="actions">
            <ApiForm
              action={`/api/v1/agent-runs/${run.run_id}/cancel`}
              label="Cancel agent run"
              class="inline"
            >
              <button type="submit" class="danger">Cancel agent run</button>
            </ApiForm>
          </div>
        )
        : null}
      <UsageTable usage={run.usage} cost={run.cost_usd} />
      <h2>Turns</h2>
      {(run.history ?? []).length === 0 ? <p class="muted">No model turn has completed yet.</p> : null}
      {(run.history ?? []).map((t) => (
        <section class="turn" aria-label={`Turn ${t.turn}`}>
          <h3>
            Turn {t.turn}{" "}
            <span class="muted">
              · {t.finish_reason} · {tokens(t.usage)} · {formatUsd(t.cost_usd)} ·{" "}
              {formatDuration(t.duration_ms)}
            </span>
          </h3>
          {t.text
            ? <pre class="text" tabindex={0} aria-label={`The model's text in turn ${t.turn}`}>{t.text}</pre>
            : <p class="muted">No text: the model called tools.</p>}
          <ToolCalls
            ctx={props.ctx}
            runId={run.run_id}
            turn={t.turn}
            calls={run.tool_calls.filter((c) => c.turn === t.turn)}
          />
        </section>
      ))}
      {run.status === "completed"
        ? (
          <>
            <h2>Answer</h2>
            {run.result !== undefined
              ? <Json value={run.result} label="Agent result" />
              : <pre class="text" tabindex={0} aria-label="Agent response">{run.response}</pre>}
          </>
        )
        : null}
    </>
  );
}

/** /ui/agent-runs/:id — an agent run's page, its live fragment, and its events as SSE. */
export function addAgentRunRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/agent-runs/:id/live", (c) => c.html(<Live ctx={ctx} id={c.req.param("id")} />));

  // The page's event log, as unnamed messages (see the run page's): Last-Event-ID resumes it.
  ui.get("/agent-runs/:id/events", (c) => {
    const run = requireView(ctx, c.req.param("id"));
    const after = Number(/^\d+$/.exec(c.req.header("last-event-id") ?? "")?.[0] ?? 0);
    const follow = (signal: AbortSignal) =>
      followAgentRunEvents(ctx.agentRuns.ledger, run.run_id, { after, signal });
    return streamRunEvents(c, ctx.shutdown, follow, false);
  });

  ui.get("/agent-runs/:id", (c) => {
    const run = requireView(ctx, c.req.param("id"));
    return c.html(
      <Layout title={`Agent run ${run.run_id}`} section="agent-runs" page={page(c)}>
        <div
          id="agent-run-live"
          hx-get={`/ui/agent-runs/${run.run_id}/live`}
          hx-trigger="run-event from:body delay:200ms"
        >
          <Live ctx={ctx} id={run.run_id} />
        </div>
        <h2>Task</h2>
        <pre class="text" tabindex={0} aria-label="Task">{run.task}</pre>
        {Object.keys(run.variables ?? {}).length > 0
          ? (
            <>
              <h2>Variables</h2>
              <Json value={run.variables} label="Variables" />
            </>
          )
          : null}
        <h2 id="events-title">Events</h2>
        <ol class="events" aria-labelledby="events-title" data-sse={`/ui/agent-runs/${run.run_id}/events`}>
        </ol>
      </Layout>,
    );
  });
}
