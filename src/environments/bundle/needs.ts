import { basename, join } from "node:path";
import { loadAgentsFolder } from "../../agents/definition/mod.ts";
import type { BundleManifest } from "../../contract/bundles.ts";
import { StationError } from "../../errors.ts";
import { formatIssue } from "../../workflows/definition/format.ts";
import type { McpConfigFile } from "../../environment_files/mcp_configs.ts";

/**
 * What a bundle's agents and MCP servers need on the machine that installs it, for its manifest: the
 * agents are checked as `stn sync` checks them first, so a bundle never carries an invalid `.prompt`.
 */

type BundledAgent = NonNullable<BundleManifest["agents"]>[number];
type BundledServer = NonNullable<BundleManifest["mcp_servers"]>[number];

/**
 * The environment's agents with their model, MCP tools (and the server offering each, when the
 * catalogue knows), child agents and sandbox; throws 422 `agent_invalid` naming file:line of every
 * issue when one is invalid.
 */
export async function bundledAgents(
  envDir: string,
  environment: string,
  knownTools?: ReadonlyMap<string, string>,
): Promise<BundledAgent[]> {
  const parsed = await loadAgentsFolder(join(envDir, "agents"), { environment, knownTools });
  const issues = parsed.flatMap((a) =>
    a.errors.map((e) => formatIssue(`agents/${basename(a.path)}`, e, "error")[0])
  );
  if (issues.length) {
    throw new StationError(
      "agent_invalid",
      `${issues.length === 1 ? "an agent is" : `${issues.length} agent issues are`} invalid, so it cannot ` +
        `go into a bundle: ${issues.join("; ")}`,
      {
        hint: "fix the file (`stn agent validate FILE` checks it; docs/agents.md lists the fields)",
        details: { issues },
      },
    );
  }
  return parsed.map((a) => {
    const d = a.definition!;
    return {
      name: d.name,
      file: `agents/${basename(a.path)}`,
      ...(d.model ? { model: d.model } : {}),
      tools: d.tools.map((t) => ({ name: t, ...(knownTools?.has(t) ? { server: knownTools.get(t) } : {}) })),
      agents: d.agents,
      ...(d.sandbox ? { sandbox: d.sandbox.runtime ?? d.sandbox.image ?? d.sandbox.mode } : {}),
    };
  });
}

/** Every server of the configs with its transport, the program it runs and the variables it uses. */
export function bundledServers(configs: McpConfigFile[]): BundledServer[] {
  return configs.flatMap((c) => c.servers.map((s) => ({ ...s, file: c.file })));
}
