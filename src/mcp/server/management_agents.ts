/** The management server's agent and agent-run tools (each one API call; run_agent can wait). */

import { z } from "zod";
import { cancelAgentRun, getAgentRun, listAgentRuns } from "../../client/agent_runs.ts";
import { getAgent, listAgents } from "../../client/agents.ts";
import type { StationClient } from "../../client/http.ts";
import { AgentRunIdParam, AgentRunListQuery, StartAgentRunBody } from "../../contract/agent_runs.ts";
import { AgentEnvironmentQuery, AgentNameParam } from "../../contract/agents.ts";
import { CancelBody } from "../../contract/runs.ts";
import { runAgent } from "./agent_runs.ts";
import { DEFAULT_WAIT_S } from "./agent_workflows.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

/** run_agent's arguments: the agent, the API's run body, and how long to wait for the run's end. */
const RunAgentArgs = z.strictObject({
  ...AgentNameParam.shape,
  ...StartAgentRunBody.shape,
  wait: z.boolean().default(false).describe(
    "wait for the run to end and return it with the agent's response (default: return the started run)",
  ),
  timeout_seconds: z.int().min(1).max(3600).default(DEFAULT_WAIT_S).describe(
    "with wait: stop waiting after this long and return the run as it is (still running)",
  ),
});

/** The agent and agent-run tools of the management server (each one API call, run_agent and its wait). */
export function agentManagementTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "list_agents",
      "List an environment's agents (default: the configured environment): name, description, model, tools, schedule.",
      AgentEnvironmentQuery.strict(),
      (a) => listAgents(client, a.environment),
    ),
    zodTool(
      "get_agent",
      "An agent with its whole definition: its .prompt source, input and output schemas, tools, limits.",
      AgentNameParam.extend(AgentEnvironmentQuery.shape).strict(),
      (a) => getAgent(client, a.name, a.environment),
    ),
    zodTool(
      "run_agent",
      "Run an agent on a task (with its input variables). Returns the started run (run_id; get_agent_run " +
        "follows it), or with wait: true the ended run with its response (and result, for a JSON answer). " +
        "A run that fails is a tool error agent_run_failed with the run in details.run.",
      RunAgentArgs,
      ({ name, wait, timeout_seconds, ...body }, signal) =>
        runAgent(client, {
          agent: name,
          body,
          how: { wait, timeoutSeconds: timeout_seconds, inspectTool: "get_agent_run" },
          signal,
        }),
    ),
    zodTool(
      "get_agent_run",
      "An agent run: status, response or error, each turn and tool call.",
      AgentRunIdParam.strict(),
      (a) => getAgentRun(client, a.run_id),
    ),
    zodTool(
      "list_agent_runs",
      "List agent runs, newest first, a page at a time (filter by agent, status, workflow_run_id).",
      AgentRunListQuery.strict(),
      (q) => listAgentRuns(client, q),
    ),
    zodTool(
      "cancel_agent_run",
      "Cancel a running agent run: its model call and running tool are aborted.",
      AgentRunIdParam.extend(CancelBody.shape).strict(),
      (a) => cancelAgentRun(client, a.run_id, a.reason),
    ),
  ];
}
