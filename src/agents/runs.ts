/**
 * AgentRuns: reading agent runs as the API shows them, for the routes and the dashboard alike (MCP reaches
 * them through the API). The agent service writes; this is the one place that reads its ledger for them.
 */

import type { AgentRun } from "../contract/agent_runs.ts";
import { StationError } from "../errors.ts";
import type { AgentLedger, AgentRunQuery, AgentRunRow } from "./ledger.ts";
import { agentRunView, queued, toolCallView } from "./views.ts";

/** A live `stn worker` as far as queued runs care (the engine's WorkerView). */
export interface LiveWorker {
  queues: string[];
  /** It runs agents. */
  agents: boolean;
  draining: boolean;
}

/** The read side of agent runs. */
export class AgentRuns {
  /** The ledger itself, for the event streams that follow a run (events/agent_run_events.ts). */
  readonly ledger: AgentLedger;
  #workers: () => LiveWorker[];

  /** `workers`: the live workers, which say why a queued run waits (none: every queue is unserved). */
  constructor(ledger: AgentLedger, workers: () => LiveWorker[] = () => []) {
    this.ledger = ledger;
    this.#workers = workers;
  }

  /** A run's ledger row, or undefined. */
  get(runId: string): AgentRunRow | undefined {
    return this.ledger.get(runId);
  }

  /** A run's ledger row, or an `agent_run_not_found` that says how to list runs. */
  require(runId: string): AgentRunRow {
    const run = this.ledger.get(runId);
    if (!run) {
      throw new StationError("agent_run_not_found", `no agent run ${runId}`, {
        hint: "list runs with `stn agent runs`",
      });
    }
    return run;
  }

  /** A run as the API shows it; with `history`, its turns and tool calls too (outputs whole with `full`). */
  view(row: AgentRunRow, history = false, full = false): AgentRun {
    const view = agentRunView(this.ledger, row, history, full);
    const waiting = row.status === "waiting_for_concurrency" && this.ledger.keys.reads.position(row.id);
    if (waiting) return { ...view, waiting_for: { key: waiting.key, position: waiting.position } };
    if (!queued(row)) return view;
    const served = this.#workers().some((w) => w.agents && !w.draining && w.queues.includes(row.queue!));
    const reason = served
      ? `a free slot of a worker on queue ${row.queue}`
      : `a worker on queue ${row.queue}: none is serving it (start \`stn worker --queue ${row.queue}\`)`;
    return { ...view, waiting_for: { queue: row.queue!, reason } };
  }

  /** One tool call of a run with its whole output, or an `agent_tool_call_not_found` naming how to list them. */
  toolCall(runId: string, callId: string): AgentRun["tool_calls"][number] {
    const call = this.ledger.toolCalls(runId).find((c) => c.call_id === callId);
    if (!call) {
      throw new StationError("agent_tool_call_not_found", `agent run ${runId} has no tool call ${callId}`, {
        hint: `\`stn agent inspect ${runId}\` lists its calls`,
      });
    }
    return toolCallView(call, true);
  }

  /** A page of runs, newest first. */
  list(q: AgentRunQuery): { runs: AgentRun[]; nextCursor: string | null } {
    const page = this.ledger.list(q);
    return { runs: page.runs.map((r) => this.view(r)), nextCursor: page.nextCursor };
  }

  /** The top-level agent runs of a workflow run's steps (child agents' runs are inside theirs). */
  ofWorkflowRun(workflowRunId: string): AgentRun[] {
    return this.ledger.byWorkflowRun(workflowRunId).filter((r) => !r.parent_run_id).map((r) => this.view(r));
  }

  /** The child run a parent's tool call started, or undefined. */
  child(parentRunId: string, callId: string): AgentRunRow | undefined {
    return this.ledger.byParentCall(parentRunId, callId);
  }

  /** The sequence number of a run's last event (0 when it has none). */
  lastSeq(runId: string): number {
    return this.ledger.lastSeq(runId);
  }
}
