/** Starting an agent run through the API for an MCP tool, and waiting for its end when asked. */

import { agentRunEvents, getAgentRun, startAgentRun } from "../../client/agent_runs.ts";
import type { StationClient } from "../../client/http.ts";
import type { AgentRun, StartAgentRunBody } from "../../contract/agent_runs.ts";
import { StationError } from "../../errors.ts";
import { DEFAULT_WAIT_S } from "./agent_workflows.ts";

/** How a run tool waits: not at all (the started run), or up to `timeoutSeconds` for its end. */
export interface AgentWait {
  wait?: boolean;
  timeoutSeconds?: number;
  /** The tool that shows a run, named in the hint of a failed run's error. */
  inspectTool: string;
}

/**
 * Follows a run's events until it ends or `signal` fires (the wait's time, or the MCP request cancelled),
 * then answers the run as it is. The stream resumes after the last event if it breaks.
 */
async function waitForAgentRun(client: StationClient, runId: string, signal: AbortSignal): Promise<AgentRun> {
  let after = 0;
  for (;;) {
    try {
      for await (const e of agentRunEvents(client, runId, { after, signal })) after = e.seq;
    } catch (err) {
      if (!signal.aborted && err instanceof StationError) throw err;
    }
    const run = await getAgentRun(client, runId);
    const waiting = run.status === "queued" || run.status === "waiting_for_concurrency";
    if ((run.status !== "running" && !waiting) || signal.aborted) return run;
  }
}

/** A run that ended without an answer, as the tool error a caller sees (the run in details.run). */
function runFailure(run: AgentRun, inspectTool: string): StationError | undefined {
  const hint = `${inspectTool} with run_id ${run.run_id} shows each turn and tool call`;
  if (run.status === "failed" || run.status === "canceled") {
    const why = run.error ? `${run.error.code}: ${run.error.message}` : run.finish_reason ?? "";
    return new StationError(
      "agent_run_failed",
      `agent run ${run.run_id} (${run.agent}) ${run.status}: ${why}`,
      {
        hint,
        details: { run },
      },
    );
  }
  if (run.finish_reason === "max_steps" && run.response === null && run.result === undefined) {
    return new StationError("agent_max_steps", `agent ${run.agent} used all its turns without an answer`, {
      hint: `raise max_steps in its .prompt; ${hint}`,
      details: { run },
    });
  }
  return undefined;
}

/**
 * Starts an agent run through the API. Without `wait`, answers the started run; with it, the ended run
 * (or, when the wait ran out, the run as it is: still running). A run that failed is an error.
 */
export async function runAgent(
  client: StationClient,
  { agent, body, how, signal }: {
    agent: string;
    body: StartAgentRunBody;
    how: AgentWait;
    signal: AbortSignal;
  },
): Promise<AgentRun> {
  const started = await startAgentRun(client, agent, body, { signal });
  if (!how.wait) return started;
  const waited = AbortSignal.any([
    signal,
    AbortSignal.timeout((how.timeoutSeconds ?? DEFAULT_WAIT_S) * 1000),
  ]);
  const run = await waitForAgentRun(client, started.run_id, waited);
  const failure = runFailure(run, how.inspectTool);
  if (failure) throw failure;
  return run;
}
