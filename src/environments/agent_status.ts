/**
 * Whether an environment's agents can run, from the agents table, the MCP tool catalogue and the files:
 * a stored agent whose tools the catalogue lacks is pending (its servers are not discovered yet), a file
 * sync refused is invalid (with its first problem), and a name with no file is simply not there. `agent
 * list` shows the first two; starting a run refuses both, naming the reason.
 */

import { join } from "node:path";
import { type InvalidAgentFile, invalidAgentFiles } from "../agents/definition/mod.ts";
import { getStoredAgent, listAgents } from "../agents/store.ts";
import type { Database } from "../db/database.ts";
import { StationError } from "../errors.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import { knownMcpTools } from "../mcp/mod.ts";
import { catalogueTools } from "./status.ts";

/** The tools of an agent the environment's catalogue does not offer (yet). */
export function undiscoveredTools(db: Database, environment: string, tools: readonly string[]): string[] {
  if (!tools.length) return [];
  const known = knownMcpTools(db, environment);
  return tools.filter((t) => !known.has(t));
}

/** The agent files of an environment that are not stored, each with the first problem sync found in it. */
export async function invalidAgents(
  db: Database,
  environmentsDir: string,
  environment: string,
): Promise<Map<string, InvalidAgentFile>> {
  const stored = new Set(listAgents(db, environment).map((a) => a.definition.name));
  const found = await invalidAgentFiles(join(environmentsDir, environment, "agents"), {
    environment,
    knownTools: catalogueTools(db, environment),
  });
  for (const name of found.keys()) if (stored.has(name)) found.delete(name);
  return found;
}

/**
 * Refuses an agent that cannot run: 404 `agent_not_found` when it has no file, 422 `agent_invalid` with
 * the file's first problem, 409 `agent_tools_pending` naming the tools not discovered yet.
 */
export async function requireRunnable(
  db: Database,
  environmentsDir: string,
  target: { environment: string; name: string },
): Promise<void> {
  const { environment, name } = target;
  const stored = getStoredAgent(db, environment, name);
  if (stored) {
    const missing = undiscoveredTools(db, environment, stored.definition.tools);
    if (!missing.length) return;
    throw new StationError(
      "agent_tools_pending",
      `agent \`${name}\` cannot run yet: the tool catalogue of \`${environment}\` lacks ${
        missing.join(", ")
      }`,
      {
        hint:
          `approve its MCP servers (\`stn env trust ${environment}\`) and run \`stn sync ${environment}\`; ` +
          "`stn env show` says which servers are not discovered",
        details: { agent: name, environment, tools: missing },
      },
    );
  }
  const invalid = (await invalidAgents(db, environmentsDir, environment)).get(name);
  if (invalid) {
    throw new StationError(
      "agent_invalid",
      `agent \`${name}\` in environment \`${environment}\`: file invalid: ${invalid.problem}`,
      {
        hint:
          `fix it and run \`stn sync ${environment}\`; \`stn agent validate --env ${environment}\` lists every issue`,
        details: { agent: name, environment, file: invalid.file },
      },
    );
  }
  const known = listAgents(db, environment).map((a) => a.definition.name);
  const near = didYouMean(name, known);
  throw new StationError(
    "agent_not_found",
    `no agent \`${name}\` in environment \`${environment}\` (no file agents/${name}.prompt)`,
    {
      hint: near
        ? `did you mean \`${near}\`?`
        : known.length
        ? `agents there: ${known.join(", ")}`
        : `add environments/${environment}/agents/${name}.prompt and run \`stn sync ${environment}\``,
    },
  );
}
