/** Calls of /api/v1/agents: an environment's agents as `stn sync` stored them. */

import type { AgentList, AgentShow } from "../contract/agents.ts";
import * as agentsAnswers from "./answers/agents.ts";
import type { StationClient } from "./http.ts";

export type { AgentList, AgentShow };

/** Lists an environment's agents (default: the server's configured environment). */
export function listAgents(client: StationClient, environment?: string): Promise<AgentList> {
  return client.json("GET", "/api/v1/agents", { query: { environment }, answer: agentsAnswers.AgentList });
}

/** Fetches one agent with its whole definition. */
export function getAgent(client: StationClient, name: string, environment?: string): Promise<AgentShow> {
  return client.json("GET", `/api/v1/agents/${encodeURIComponent(name)}`, {
    query: { environment },
    answer: agentsAnswers.AgentShow,
  });
}
