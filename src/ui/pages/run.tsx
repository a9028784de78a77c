/** /ui/runs/:id: a workflow run's page, its live fragment, controls and events. */

import type { Context, Hono } from "hono";
import { notFound } from "../../errors.ts";
import { followRunEvents } from "../../events/run_events.ts";
import { streamRunEvents } from "../../events/sse.ts";
import type { StationContext } from "../../context.ts";
import { formatUsd } from "../../telemetry/cost.ts";
import { type RunView, runView, TERMINAL_RUN } from "../../workflows/engine/mod.ts";
import type { ListedStep } from "../../workflows/runs.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { ApiForm, formatDuration, Json, span, Status, StepErrorText, Time } from "../parts.tsx";
import { DecisionForm } from "./approval_form.tsx";
import { AgentRunTable } from "./agent_runs.tsx";
import type { AgentRun } from "../../contract/agent_runs.ts";
import { ExpressionBox, Lineage, RetryButton, StepRepair, stoppedAt } from "./run_repair.tsx";
import { awaitedEvent, Decisions, EventForms, RunAgain, Timers } from "./run_actions.tsx";

function requireRun(ctx: StationContext, id: string) {
  const run = ctx.runs.get(id);
  if (!run) throw notFound("run", id, "the runs page lists every run");
  return run;
}

/** Cancel, pause and resume, as the run's status allows. */
function Controls(props: { run: RunView }) {
  const { run } = props;
  if ((TERMINAL_RUN as readonly string[]).includes(run.status)) return null;
  const base = `/api/v1/workflow-runs/${run.id}`;
  return (
    <div class="actions">
      {run.status === "paused"
        ? (
          <ApiForm action={`${base}/resume`} label="Resume run" class="inline">
            <button type="submit">Resume</button>
          </ApiForm>
        )
        : (
          <ApiForm action={`${base}/pause`} label="Pause run" class="inline">
            <button type="submit" class="secondary">Pause</button>
          </ApiForm>
        )}
      <ApiForm action={`${base}/cancel`} label="Cancel run" class="inline">
        <button type="submit" class="danger">Cancel run</button>
      </ApiForm>
    </div>
  );
}

/** Each attempt of each step: a bar on the run's time axis, its duration, status and error. */
function Timeline(props: { run: RunView; steps: ListedStep[]; now: number; parentAgents: AgentRun[] }) {
  const { run, steps, now } = props;
  const stopped = stoppedAt(run, steps);
  if (steps.length === 0) return <p class="muted">No step has been scheduled yet.</p>;
  const starts = steps.map((s) => Date.parse(s.started_at ?? s.created_at));
  const t0 = Math.min(...starts);
  const t1 = Math.max(...steps.map((s) => (s.completed_at ? Date.parse(s.completed_at) : now)));
  const total = Math.max(1, t1 - t0);
  return (
    <table>
      <caption>Step attempts in the order they were scheduled</caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Type</th>
          <th scope="col">Attempt</th>
          <th scope="col">Status</th>
          <th scope="col">Duration</th>
          <th scope="col">Timeline</th>
          <th scope="col">Output or error</th>
          <th scope="col">Repair</th>
        </tr>
      </thead>
      <tbody>
        {steps.map((s, i) => {
          const end = s.completed_at ? Date.parse(s.completed_at) : now;
          const left = ((starts[i] - t0) / total) * 100;
          const width = s.started_at ? ((end - starts[i]) / total) * 100 : 0;
          return (
            <tr>
              <td>
                <code>{s.path}</code>
              </td>
              <td>{s.type}</td>
              <td>{s.attempt}</td>
              <td>
                <Status status={s.status} />
                {s.waiting_for ? <span class="muted">{` — ${s.waiting_for}`}</span> : null}
              </td>
              <td>{formatDuration(s.duration_ms ?? span(s.started_at, s.completed_at, now))}</td>
              <td>
                <div class="bar" aria-hidden="true">
                  <span
                    class={s.status === "failed" ? "failed" : undefined}
                    style={`left:${left.toFixed(1)}%;width:${width.toFixed(1)}%`}
                  />
                </div>
              </td>
              <td>
                <StepErrorText error={s.error} />
                {s.output !== null
                  ? (
                    <details>
                      <summary>output</summary>
                      <Json value={s.output} label={`Output of ${s.path}, attempt ${s.attempt}`} />
                    </details>
                  )
                  : null}
              </td>
              <td>
                <StepRepair
                  run={run}
                  step={s}
                  stoppedAt={s === stopped}
                  parentAgent={s.reused_from && s.type === "agent"
                    ? props.parentAgents.find((r) =>
                      r.step_path === s.reused_from!.path && r.step_attempt === s.reused_from!.attempt
                    )
                    : undefined}
                />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The parts of a run page that change: status, controls, pending approvals, timeline, result. */
function Live(props: { ctx: StationContext; id: string }) {
  const { runs, agentRuns: agents } = props.ctx;
  const run = runs.view(requireRun(props.ctx, props.id));
  const steps = runs.steps(run.id, { waitingFor: true });
  const approvals = runs.approvals({ runId: run.id });
  const pending = approvals.filter((a) => a.status === "pending");
  const agentRuns = agents.ofWorkflowRun(run.id);
  const waiting = runs.waitingFor(requireRun(props.ctx, props.id));
  const parentAgents = run.parent_run_id ? agents.ofWorkflowRun(run.parent_run_id) : [];
  return (
    <>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Status status={run.status} />
          {waiting ? ` — waiting for concurrency key ${waiting.key}, position ${waiting.position}` : ""}
        </dd>
        <dt>Workflow</dt>
        <dd>
          <a href={`/ui/workflows/${encodeURIComponent(run.workflow_id)}`}>{run.workflow_id}</a>
          {run.workflow_version ? ` v${run.workflow_version}` : ""}
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={run.started_at ?? run.created_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(span(run.started_at, run.completed_at))}</dd>
        {agentRuns.length
          ? (
            <>
              <dt>Cost</dt>
              <dd>{formatUsd(run.cost_usd)}</dd>
            </>
          )
          : null}
      </dl>
      {run.error
        ? (
          <div class="error" role="alert">
            <strong>Run failed:</strong> <StepErrorText error={run.error} />
            {run.error.step ? <span>(step {run.error.step})</span> : null}
          </div>
        )
        : null}
      <Lineage run={run} forks={runs.forks(run.id)} />
      <Controls run={run} />
      <RetryButton run={run} />
      <Decisions approvals={approvals} />
      <Timers timers={runs.pendingTimers(run.id)} />
      {pending.map((a) => (
        <section aria-label={`Approval ${a.id}`}>
          <h2>Waiting for approval: {a.step_id}</h2>
          <p>{a.message}</p>
          <DecisionForm approval={a} />
        </section>
      ))}
      <h2>Steps</h2>
      <Timeline run={run} steps={steps} now={Date.now()} parentAgents={parentAgents} />
      {agentRuns.length > 0
        ? (
          <>
            <h2>Agent runs</h2>
            <AgentRunTable runs={agentRuns} caption="Agent runs of this run's agent steps" step />
          </>
        )
        : null}
      {run.status === "completed"
        ? (
          <>
            <h2>Result</h2>
            <Json value={run.result} label="Run result" />
          </>
        )
        : null}
    </>
  );
}

/** /ui/runs/:id — a run's page, its live fragment, and its events as SSE. */
export function addRunRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/runs/:id/live", (c) => c.html(<Live ctx={ctx} id={c.req.param("id")} />));

  // The page's event log: the run's stream (as /api/v1/workflow-runs/{id}/events) as unnamed
  // messages, so the page lists every type without knowing them; Last-Event-ID resumes it.
  ui.get("/runs/:id/events", (c) => {
    const run = requireRun(ctx, c.req.param("id"));
    const after = Number(/^\d+$/.exec(c.req.header("last-event-id") ?? "")?.[0] ?? 0);
    return streamRunEvents(
      c,
      ctx.shutdown,
      (signal) => followRunEvents(ctx.engine, run.id, { after, signal }),
      false,
    );
  });

  ui.get("/runs/:id", (c) => {
    const row = requireRun(ctx, c.req.param("id"));
    const run = runView(row);
    const ended = (TERMINAL_RUN as readonly string[]).includes(run.status);
    return c.html(
      <Layout title={`Run ${run.id}`} section="runs" page={page(c)}>
        <div id="run-live" hx-get={`/ui/runs/${run.id}/live`} hx-trigger="run-event from:body delay:200ms">
          <Live ctx={ctx} id={run.id} />
        </div>
        <h2>Input</h2>
        <Json value={run.input} label="Run input" />
        <ExpressionBox run={run} steps={ctx.runs.steps(run.id)} />
        {ended ? null : (
          <section aria-labelledby="send-title">
            <h2 id="send-title">Send an event or a signal</h2>
            <p class="muted">
              An event goes to every run waiting for it (and starts the workflows it triggers); a signal goes
              to this run only, kept until one of its steps waits for it.
            </p>
            <EventForms runId={run.id} event={awaitedEvent(row.definition, ctx.runs.steps(run.id))} />
          </section>
        )}
        <section aria-labelledby="again-title">
          <h2 id="again-title">Run again</h2>
          <RunAgain run={run} row={row} />
        </section>
        <h2 id="events-title">Events</h2>
        <ol class="events" aria-labelledby="events-title" data-sse={`/ui/runs/${run.id}/events`}></ol>
      </Layout>,
    );
  });
}
