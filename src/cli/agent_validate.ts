/**
 * `stn agent validate`: every issue of every `.prompt` file, read locally. Validating an environment's
 * agents folder also checks their MCP tool names against the environment's discovered tool catalogue
 * (through the station: the one it finds, or an embedded one), as `stn sync` will; with no catalogue yet
 * the tools are named unchecked in a warning.
 */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { join } from "node:path";
import { showEnvironment } from "../client/environments.ts";
import type { EnvironmentDetails } from "../contract/environments.ts";
import { StationError, usageError } from "../errors.ts";
import { formatIssue } from "../workflows/definition/format.ts";
import type { ValidationIssue } from "../workflows/definition/validate.ts";
import { commandConfig, jsonMode, withStation } from "./context.ts";
import { localFileError } from "./local_files.ts";
import { fail, render, type Style } from "./output.ts";

/** The station's own files stay as they are while validating: no sync at the embedded start. */
const NO_SYNC = { embeddedFlags: { "workflows.sync_on_start": false } };

/** Issues the station found checking tools against the catalogue; the rest it found is found locally too. */
const CATALOGUE_CODES = new Set(["unknown_tool", "tool_not_discovered"]);

/**
 * Adds the catalogue's verdict on each agent's tools (the station checked them as sync does), or, when no
 * server of the environment was ever discovered, a warning that its tools were not checked.
 */
function addCatalogueIssues(
  results: FileReport[],
  status: EnvironmentDetails,
  toolsOf: (name: string) => string[],
): void {
  const discovered = status.mcp_servers.some((s) => s.status === "ok");
  for (const r of results) {
    const tools = toolsOf(r.name);
    if (!tools.length) continue;
    if (!discovered) {
      r.warnings.push({
        code: "tools_not_checked",
        path: "/tools",
        message: `${
          tools.join(", ")
        }: not checked, environment ${status.name} has no discovered MCP tools yet`,
        hint: `approve its MCP servers and run \`stn sync ${status.name}\`; then validate again`,
      });
      continue;
    }
    const found = status.agents.find((a) => a.name === r.name);
    const theirs = (issues: ValidationIssue[] | undefined) =>
      (issues ?? []).filter((i) => CATALOGUE_CODES.has(i.code));
    r.errors.push(...theirs(found?.errors));
    r.warnings.push(...theirs(found?.warnings));
    r.valid = r.errors.length === 0;
  }
}

/** One file's validation, as `agent validate --json` shows it. */
interface FileReport {
  file: string;
  name: string;
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/** The files to validate: those given (each must be a readable file), else the environment's agents folder. */
async function validateTargets(files: string[], environment: string, cmd: Command): Promise<string[]> {
  if (files.length === 0) {
    const dir = join((await commandConfig(cmd)).paths.environments, environment, "agents");
    const { promptFiles } = await lazyImport<typeof import("../agents/definition/mod.ts")>(
      "../agents/definition/mod.ts",
      import.meta.url,
    );
    const found = await promptFiles(dir);
    if (found.length) return found;
    throw usageError(
      "no_agent_files",
      `no .prompt files in ${dir}`,
      "pass the files to check, or --env NAME for another environment",
    );
  }
  for (const f of files) {
    try {
      if ((await Deno.stat(f)).isDirectory) throw new Deno.errors.IsADirectory();
    } catch (err) {
      throw localFileError(f, err);
    }
  }
  return files;
}

function validateText(report: { files: FileReport[] }, style: Style): string[] {
  const paint = { error: style.red, warning: style.yellow, dim: style.dim };
  const lines: string[] = [];
  for (const r of report.files) {
    for (const e of r.errors) lines.push(...formatIssue(r.file, e, "error", paint));
    for (const w of r.warnings) lines.push(...formatIssue(r.file, w, "warning", paint));
    if (r.valid) {
      const n = r.warnings.length;
      lines.push(`${r.file}: ${style.green("ok")}${n ? ` (${n} warning${n === 1 ? "" : "s"})` : ""}`);
    }
  }
  return lines;
}

/** `agent validate`: every issue of every file; exit 1 when any file has an error. */
export async function validateAgents(files: string[], opts: { env?: string }, cmd: Command): Promise<void> {
  const environment = opts.env ?? (await commandConfig(cmd)).values.workflows.environment;
  const targets = await validateTargets(files, environment, cmd);
  const { loadAgentFiles } = await lazyImport<typeof import("../agents/definition/mod.ts")>(
    "../agents/definition/mod.ts",
    import.meta.url,
  );
  const loaded = await loadAgentFiles(targets, { environment });
  const results: FileReport[] = loaded.map((a) => ({
    file: a.path,
    name: a.name,
    valid: a.errors.length === 0,
    errors: a.errors,
    warnings: a.warnings,
  }));
  // The catalogue lives with the station: asked only for an environment's folder whose agents use MCP tools.
  if (files.length === 0 && loaded.some((a) => a.definition?.tools.length)) {
    const status = await withStation(cmd, (client) => showEnvironment(client, environment), NO_SYNC);
    addCatalogueIssues(
      results,
      status,
      (name) => loaded.find((a) => a.name === name)?.definition?.tools ?? [],
    );
  }
  const invalid = results.filter((r) => !r.valid).length;
  const report = { valid: invalid === 0, files: results };
  const view = { json: jsonMode(cmd), text: validateText };
  if (!invalid) return render(report, view);
  fail(
    report,
    view,
    new StationError("agent_invalid", `${invalid} of ${results.length} agent files are invalid`, {
      hint: "each `error` line says what is wrong and its hint what to write (docs/agents.md)",
    }),
  );
}
