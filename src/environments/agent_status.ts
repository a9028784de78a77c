/**
 * Whether an environment's agents can run, from the agents table, the MCP tool catalogue and the files:
 * a stored agent whose tools the catalogue lacks is pending (its servers are not discovered yet) or
 * invalid (every server is discovered and none offers them), a file sync refused is invalid (with its
 * first problem), and a name with no file is simply not there. `agent
 * list` shows the first two; starting a run refuses both, naming the reason.
 */

import { join } from "node:path";
import { type InvalidAgentFile, invalidAgentFiles } from "../agents/definition/mod.ts";
import { getStoredAgent, listAgents } from "../agents/store.ts";
import type { Database } from "../db/database.ts";
import { StationError } from "../errors.ts";
import { didYouMean } from "../lib/did_you_mean.ts";
import { knownMcpTools, listMcpServers } from "../mcp/mod.ts";
import { catalogueTools } from "./status.ts";

/** Whether a stored agent's MCP tools are there: ok, pending (servers not discovered yet) or invalid (unknown). */
export interface ToolReadiness {
  status: "ok" | "pending" | "invalid";
  /** Why it cannot run (null when ok). */
  problem: string | null;
  /** The tools the catalogue lacks. */
  missing: string[];
}

/**
 * The tools of an agent against the catalogue: those it lacks are pending while a server of the
 * environment is not discovered (unapproved, failed, never started), and unknown once every one is.
 */
export function toolReadiness(db: Database, environment: string, tools: readonly string[]): ToolReadiness {
  const known = tools.length ? knownMcpTools(db, environment) : new Map();
  const missing = tools.filter((t) => !known.has(t));
  if (!missing.length) return { status: "ok", problem: null, missing };
  const waiting = listMcpServers(db, environment).filter((s) => s.error || !s.discovered_at).map((s) =>
    s.name
  );
  if (waiting.length) {
    return {
      status: "pending",
      problem: `tools not discovered yet: ${missing.join(", ")} (servers not discovered: ${
        waiting.join(", ")
      })`,
      missing,
    };
  }
  return { status: "invalid", problem: `no MCP server offers ${missing.join(", ")}`, missing };
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
    const tools = toolReadiness(db, environment, stored.definition.tools);
    if (tools.status === "ok") return;
    const details = { agent: name, environment, tools: tools.missing };
    if (tools.status === "invalid") {
      throw new StationError(
        "agent_invalid",
        `agent \`${name}\` in environment \`${environment}\`: ${tools.problem}`,
        {
          hint: "tools are named `__<tool>` as the servers list them (`stn env show` lists the servers)",
          details,
        },
      );
    }
    throw new StationError("agent_tools_pending", `agent \`${name}\` cannot run yet: ${tools.problem}`, {
      hint: `approve its MCP servers (\`stn env trust ${environment}\`) and run \`stn sync ${environment}\``,
      details,
    });
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
