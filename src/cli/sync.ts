import type { Command } from "./command.ts";
import { syncWorkflows } from "../client/workflows.ts";
import { StationError } from "../errors.ts";
import { formatInvalid } from "../workflows/definition/format.ts";
import { agentSyncLines } from "./agent.ts";
import { jsonMode, withStation } from "./context.ts";
import { mcpErrorLines, mcpSyncError, mcpSyncLines } from "./mcp_sync.ts";
import { fail, note, render, type Style } from "./output.ts";

/** `stn sync [env]`: DeclarativeSync of an environment's agent and workflow files. */
export function syncCommand(program: Command): void {
  program.command("sync [environment]")
    .description(
      "load an environment's MCP server configs (discovering their tools), agents/*.prompt and " +
        "workflows/*.workflow.{yaml,yml,json} into the station (default env: workflows.environment)",
    )
    .option(
      "--trust",
      "approve every MCP server the environment's configs define, as written now, before syncing " +
        "(without it a server not approved is reported with what it runs, and not started)",
    )
    .action(async (environment: string | undefined, opts: { trust?: boolean }, cmd: Command) => {
      // An embedded runtime would sync at its own start and this report would then say "unchanged" for
      // everything it just created; this command is the sync, so that start-up one is switched off.
      const report = await withStation(cmd, (client) => syncWorkflows(client, environment, opts), {
        embeddedFlags: { "workflows.sync_on_start": false },
      });
      const view = {
        json: jsonMode(cmd),
        text: (r: typeof report, style: Style) => {
          const lines: string[] = [...mcpSyncLines(r.mcp_servers, style), ...agentSyncLines(r)];
          note((errStyle) => mcpErrorLines(r.mcp_servers, errStyle));
          const line = (what: string, items: Array<{ id: string; version: number }>) =>
            items.length && lines.push(`${what}: ${items.map((i) => `${i.id} (v${i.version})`).join(", ")}`);
          line("created", r.created);
          line("updated", r.updated);
          line("unchanged", r.unchanged);
          if (r.enabled.length) lines.push(`re-enabled: ${r.enabled.join(", ")}`);
          if (r.disabled.length) lines.push(`disabled (file removed): ${r.disabled.join(", ")}`);
          note((style) =>
            r.invalid.flatMap((inv) => formatInvalid(inv).map((l) => `${style.red("invalid:")} ${l}`))
          );
          lines.push(
            `environment ${r.environment}: ${r.created.length} created, ${r.updated.length} updated, ` +
              `${r.unchanged.length} unchanged, ${r.disabled.length} disabled, ${r.invalid.length} invalid`,
          );
          return lines;
        },
      };
      const badAgents = report.agents?.invalid.length ?? 0;
      const mcpError = mcpSyncError(report.mcp_servers, report.environment);
      if (report.invalid.length === 0 && badAgents === 0 && !mcpError) return render(report, view);
      if (report.invalid.length === 0 && badAgents === 0) fail(report, view, mcpError!);
      fail(
        report,
        view,
        report.invalid.length
          ? new StationError(
            "workflow_invalid",
            `${report.invalid.length + badAgents} invalid file(s) were skipped`,
            {
              status: 400,
              hint: `\`stn workflow validate ${report.directory}/*\` shows each issue with its hint`,
            },
          )
          : new StationError("agent_invalid", `${badAgents} invalid agent file(s) were skipped`, {
            status: 400,
            hint: `\`stn agent validate --env ${report.environment}\` shows each issue with its hint`,
          }),
      );
    });
}
