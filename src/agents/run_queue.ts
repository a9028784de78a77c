/** The task queue an agent run started directly goes to (docs/workers.md#agent-runs-on-a-queue). */

import { StationError } from "../errors.ts";
import type { AgentRunRequest } from "./run_request.ts";
import type { AgentDefinition } from "./types.ts";

/**
 * The task queue of a run started directly: the start's, else the agent's `queue:`. Under test doubles or with
 * child agents (this process's) a run stays here: the agent's `queue:` is not used, the start's is refused.
 */
export function queueOf(req: AgentRunRequest, def: AgentDefinition): string | undefined {
  if (req.step || req.parent) return undefined;
  const why = def.agents.length > 0 ? "it has child agents" : req.doubles ? "it runs under test doubles" : "";
  if (!why) return req.queue ?? def.queue;
  if (req.queue === undefined) return undefined;
  throw new StationError(
    "agent_queue_unsupported",
    `agent ${def.name} cannot run on queue ${req.queue}: ${why}`,
    {
      hint: "run it without --queue: its runs stay on the station",
    },
  );
}
