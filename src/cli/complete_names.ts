/** `stn __complete KIND`: the names shell completion offers (run ids, workflows, agents, …), from the station. */

import type { Command } from "./command.ts";
import { listAgentRuns } from "../client/agent_runs.ts";
import { listAgents } from "../client/agents.ts";
import { discoverTarget } from "../client/discovery.ts";
import { listEnvironments } from "../client/environments.ts";
import { listFiles } from "../client/files.ts";
import { StationClient } from "../client/http.ts";
import { listRuns } from "../client/workflow_runs.ts";
import { listWorkflows } from "../client/workflows.ts";
import { loadConfig } from "../config/load.ts";
import { usageError } from "../errors.ts";
import { globals, jsonMode } from "./context.ts";
import { render } from "./output.ts";

/** The kinds of names completion asks for, and how each is read from the station. */
const LISTERS = {
  runs: async (c: StationClient) => (await listRuns(c, { limit: 100 })).runs.map((r) => r.run_id),
  "agent-runs": async (c: StationClient) =>
    (await listAgentRuns(c, { limit: 100 })).runs.map((r) => r.run_id),
  workflows: async (c: StationClient) => (await listWorkflows(c)).map((w) => w.id),
  agents: async (c: StationClient) => (await listAgents(c)).agents.map((a) => a.name),
  environments: async (c: StationClient) => (await listEnvironments(c)).map((e) => e.name),
  files: async (c: StationClient) => (await listFiles(c, { limit: 500 })).files.map((f) => f.key),
} as const;

/** A kind of name shell completion can ask `stn __complete` for. */
export type NameKind = keyof typeof LISTERS;

/** The kinds, for the completion scripts and the usage error. */
export const NAME_KINDS = Object.keys(LISTERS) as NameKind[];

/** How long a completion waits for the station: a shell waiting on Tab must not hang. */
const TIMEOUT_MS = 1500;

/**
 * The names of a kind from the station the CLI would talk to (--station, STATION_URL, a live server.json);
 * none when no station is running or it does not answer in time — completion never starts an embedded one
 * and never prints an error into the user's prompt.
 */
async function names(cmd: Command, kind: NameKind): Promise<string[]> {
  try {
    const config = loadConfig({ configPath: globals(cmd).config });
    const target = await discoverTarget({ station: globals(cmd).station, paths: config.paths });
    if (!target.url) return [];
    const token = Deno.env.get("STATION_API_TOKEN") ?? target.token ?? config.values.server.api_token;
    return await LISTERS[kind](new StationClient(target.url, { token, timeoutMs: TIMEOUT_MS }));
  } catch {
    return [];
  }
}

/** Adds the hidden `__complete KIND` the completion scripts call. */
export function completeNamesCommand(program: Command): void {
  program.command("__complete", { hidden: true })
    .description("print the names shell completion offers, one per line (nothing when no station answers)")
    .argument("<kind>", NAME_KINDS.join(", "))
    .action(async (kind: string, _opts: unknown, cmd: Command) => {
      if (!(NAME_KINDS as string[]).includes(kind)) {
        throw usageError(
          "invalid_usage",
          `no completion of ${JSON.stringify(kind)}`,
          `one of ${NAME_KINDS.join(", ")}`,
        );
      }
      const found = await names(cmd, kind as NameKind);
      render({ kind, names: found }, { json: jsonMode(cmd), text: (r) => r.names });
    });
}
