/**
 * AgentRuns: reading agent runs as the API shows them, for the routes and the dashboard alike (MCP reaches
 * them through the API). The agent service writes; this is the one place that reads its ledger for them.
 */

import type { AgentRun } from "../contract/agent_runs.ts";
import { StationError } from "../errors.ts";
import type { AgentLedger, AgentRunQuery, AgentRunRow } from "./ledger.ts";
import { agentRunView } from "./views.ts";

/** The read side of agent runs. */
export class AgentRuns {
  /** The ledger itself, for the event streams that follow a run (events/agent_run_events.ts). */
  readonly ledger: AgentLedger;

  constructor(ledger: AgentLedger) {
    this.ledger = ledger;
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

  /** A run as the API shows it; with `history`, its turns and tool calls too. */
  view(row: AgentRunRow, history = false): AgentRun {
    return agentRunView(this.ledger, row, history);
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
