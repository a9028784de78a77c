/** `stn import station`: a Station (Go project) home brought into stn, Station's files only read. */

import type { Command } from "./command.ts";
import { resolve } from "node:path";
import { resolveHome, stationPaths } from "../config/paths.ts";
import { importStation, type StationImport } from "../environments/station_import.ts";
import { jsonMode } from "./context.ts";
import { render } from "./output.ts";

function text(r: StationImport): string[] {
  const lines = [`Station home ${r.home} (database ${r.database}, goose version ${r.schema_version})`];
  const verb = r.dry_run ? "would write" : "wrote";
  for (const e of r.environments) {
    const written = [...e.copied, ...e.agents_written, ...e.workflows_written];
    lines.push(
      `environment ${e.name}: ${
        e.shared ? "Station's folder is stn's (one home): read as it is" : `${e.folder}`
      }${written.length ? `; ${verb} ${written.length} file(s)` : ""}`,
    );
    for (const f of written) lines.push(`  + ${f}`);
    if (e.kept.length) lines.push(`  kept (already there): ${e.kept.join(", ")}`);
  }
  if (r.not_imported.length) lines.push("not imported:");
  for (const n of r.not_imported) lines.push(`  ${n.count} ${n.what}: ${n.why}`);
  lines.push(
    "",
    "Next: `stn sync` loads the environments; `stn workflow migrate` converts Station's workflow files;",
    "`stn config migrate` converts Station's config.yaml (docs/migrating-from-station.md).",
  );
  return lines;
}

/** `stn import station [--home DIR] [--dry-run]`. */
export function importCommand(program: Command): void {
  const cmd = program.command("import").description("bring another tool's data into stn");
  cmd.command("station")
    .description(
      "bring a Station (Go project) home into stn: its environment folders (new files only), the agents and " +
        "workflows only its database holds, and a report of what does not carry over; Station's files are only read",
    )
    .option("--home <dir>", "Station's home (default: STATION_HOME, ~/.config/station)")
    .option("--dry-run", "report what would be written, write nothing")
    .action(async (opts: { home?: string; dryRun?: boolean }, c: Command) => {
      const stnHome = resolveHome();
      const r = await importStation(resolve(opts.home ?? stnHome), stationPaths(stnHome).environments, {
        dryRun: Boolean(opts.dryRun),
      });
      render(r, { json: jsonMode(c), text });
    });
}
