/** /ui/agent-runs: the agent runs table, filtered by agent. */

import type { Context, Hono } from "hono";
import { listAgents } from "../../agents/store.ts";
import { type AgentRun, AgentRunStatus } from "../../contract/agent_runs.ts";
import type { StationContext } from "../../context.ts";
import { formatUsd } from "../../telemetry/cost.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { formatDuration, span, Status, Time } from "../parts.tsx";
import { OlderRuns, type RunFilter, runFilter, RunFilterForm, runQuery } from "../run_filter.tsx";

const list = { path: "/ui/agent-runs", key: "agent" };
type Filter = RunFilter<AgentRun["status"]>;

/** A run's status, with why it ended when that says more (`completed (max_steps)`). */
export function AgentStatus(props: { run: AgentRun }) {
  const { status, finish_reason } = props.run;
  const more = finish_reason && !["stop", status].includes(finish_reason) ? ` (${finish_reason})` : "";
  return (
    <>
      <Status status={status} />
      {more ? <span class="muted">{more}</span> : null}
    </>
  );
}

/** A task as one short line: the whole text is the cell's title. */
const clip = (task: string) => {
  const line = task.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
};

/** Agent runs as a table (the runs list, and a workflow run's page for its agent steps). */
export function AgentRunTable(props: { runs: AgentRun[]; caption: string; step?: boolean }) {
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Agent run</th>
          <th scope="col">{props.step ? "Step" : "Agent"}</th>
          <th scope="col">Task</th>
          <th scope="col">Status</th>
          <th scope="col">Turns</th>
          <th scope="col">Tokens</th>
          <th scope="col">Cost</th>
          {props.step ? null : <th scope="col">Started by</th>}
          <th scope="col">Started</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {props.runs.map((r) => (
          <tr>
            <td>
              <a href={`/ui/agent-runs/${r.run_id}`}>
                <code>{r.run_id}</code>
              </a>
            </td>
            <td>
              {props.step ? <code>{r.step_path}</code> : null} {r.agent}
            </td>
            <td class="task" title={r.task}>{clip(r.task)}</td>
            <td>
              <AgentStatus run={r} />
            </td>
            <td>{r.turns}</td>
            <td>{r.usage.total_tokens}</td>
            <td>{formatUsd(r.cost_usd)}</td>
            {props.step ? null : (
              <td>
                <StartedBy run={r} />
              </td>
            )}
            <td>
              <Time iso={r.started_at} />
            </td>
            <td>{formatDuration(r.duration_ms ?? span(r.started_at, r.ended_at))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What started a run: a workflow run's step, a parent agent's tool call, or a direct request. */
export function StartedBy(props: { run: AgentRun }) {
  const r = props.run;
  if (r.workflow_run_id) {
    return (
      <>
        step <code>{r.step_path}</code> of <a href={`/ui/runs/${r.workflow_run_id}`}>{r.workflow_run_id}</a>
      </>
    );
  }
  if (r.parent_run_id) {
    return (
      <>
        agent run <a href={`/ui/agent-runs/${r.parent_run_id}`}>{r.parent_run_id}</a>
      </>
    );
  }
  return <span class="muted">a request</span>;
}

function Rows(props: { runs: AgentRun[]; next: string | null; filter: Filter }) {
  if (props.runs.length === 0) {
    if (props.filter.name || props.filter.status) {
      return (
        <p class="muted">
          No agent runs match. <a href={list.path}>Show every agent run</a>.
        </p>
      );
    }
    return (
      <div class="empty">
        <p>No agent runs yet.</p>
        <p class="muted">
          An agent runs when a workflow's agent step reaches it, or from a shell:{" "}
          <code>stn agent run NAME "what to do"</code> (<code>stn agent list</code> names the agents).
        </p>
      </div>
    );
  }
  return (
    <>
      <AgentRunTable runs={props.runs} caption="Agent runs, newest first" />
      <OlderRuns list={list} filter={props.filter} next={props.next} label="Older agent runs" />
    </>
  );
}

function readRuns(ctx: StationContext, f: Filter) {
  const page = ctx.agentRuns.list({ agent: f.name, status: f.status, cursor: f.cursor, limit: 50 });
  return { runs: page.runs, next: page.nextCursor };
}

/** /ui/agent-runs: every agent run, filtered by agent and status, refreshed every two seconds. */
export function addAgentRunListRoutes(
  ui: Hono,
  ctx: StationContext,
  page: (c: Context) => PageContext,
): void {
  ui.get("/agent-runs/rows", (c) => {
    const f = runFilter(list, c.req.query(), AgentRunStatus.options);
    return c.html(<Rows {...readRuns(ctx, f)} filter={f} />);
  });
  ui.get("/agent-runs", (c) => {
    const f = runFilter(list, c.req.query(), AgentRunStatus.options);
    const agents = listAgents(ctx.db, ctx.agents.environment).map((a) => a.definition.name);
    if (f.name && !agents.includes(f.name)) agents.push(f.name);
    return c.html(
      <Layout title="Agent runs" section="agent-runs" page={page(c)}>
        <RunFilterForm
          list={list}
          filter={f}
          label="Filter agent runs"
          nameLabel="Agent"
          names={agents}
          statuses={AgentRunStatus.options}
        />
        <div id="agent-runs" hx-get={`/ui/agent-runs/rows${runQuery(list, f)}`} hx-trigger="every 2s">
          <Rows {...readRuns(ctx, f)} filter={f} />
        </div>
      </Layout>,
    );
  });
}
