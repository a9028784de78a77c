import { type Command, Option } from "commander";
import { stringify } from "yaml";
import { dirname, join } from "node:path";
import {
  disableWorkflow,
  enableWorkflow,
  getWorkflow,
  listWorkflows,
  listWorkflowVersions,
  purgeWorkflow,
  saveWorkflow,
  syncWorkflows,
} from "../client/workflows.ts";
import { StationError, usageError } from "../errors.ts";
import { loadWorkflowFile } from "../workflows/definition/load.ts";
import type { ValidationIssue, ValidationResult } from "../workflows/definition/validate.ts";
import { planMigration } from "../workflows/migrate/files.ts";
import { formatIssue, hasErrors, summary } from "../workflows/migrate/report.ts";
import { formatInvalid } from "../workflows/sync.ts";
import { globals, withStation } from "./context.ts";
import { CliExit, printFields, printJson, printTable, style } from "./output.ts";

/** `file:line:col: severity CODE: message` (the format editors and CI logs understand) and its hint. */
function issueLines(file: string, issue: ValidationIssue, severity: "error" | "warning"): string[] {
  const where = issue.line ? `${file}:${issue.line}:${issue.column ?? 1}` : file;
  const sev = severity === "error" ? style.red("error") : style.yellow("warning");
  const lines = [`${where}: ${sev} ${issue.code}: ${issue.message} (at ${issue.path})`];
  if (issue.hint) lines.push(`  ${style.dim("hint:")} ${issue.hint}`);
  return lines;
}

async function validateFiles(files: string[], json: boolean): Promise<void> {
  const results: Array<{ file: string } & ValidationResult> = [];
  for (const file of files) {
    try {
      results.push({ file, ...(await loadWorkflowFile(file)) });
    } catch (err) {
      const e = err as StationError;
      results.push({
        file,
        valid: false,
        errors: [{ code: e.code ?? "file_unreadable", path: "/", message: e.message, hint: e.hint }],
        warnings: [],
      });
    }
  }
  const invalid = results.filter((r) => !r.valid);
  if (json) {
    printJson(results.map(({ definition: _d, ...r }) => r));
  } else {
    for (const r of results) {
      for (const e of r.errors) for (const l of issueLines(r.file, e, "error")) console.log(l);
      for (const w of r.warnings) for (const l of issueLines(r.file, w, "warning")) console.log(l);
      if (r.valid) {
        console.log(
          `${r.file}: ${style.green("ok")}${
            r.warnings.length ? ` (${r.warnings.length} warning${r.warnings.length === 1 ? "" : "s"})` : ""
          }`,
        );
      }
    }
  }
  if (invalid.length > 0) {
    if (!json) {
      console.error(`${style.red("error:")} ${invalid.length} of ${results.length} files are invalid`);
    }
    throw new CliExit(1);
  }
}

/** `workflow migrate`: converts, writes (or prints), reports; exit 1 on anything unconvertible (or, with --check, any change). */
async function migrateFiles(
  path: string,
  opts: { output?: string; check?: boolean },
  json: boolean,
): Promise<void> {
  const planned = await planMigration(path, opts.output, Boolean(opts.check));
  const results = planned.map((p) => p.result);
  if (!opts.check) {
    for (const p of planned) {
      if (p.target) {
        await Deno.mkdir(dirname(p.target), { recursive: true });
        await writeWhole(p.target, p.result.text);
      } else if (!json) Deno.stdout.writeSync(new TextEncoder().encode(p.result.text));
    }
  }
  if (json) printJson(results.map(({ text, ...r }) => (opts.output || opts.check ? r : { ...r, text })));
  else {
    for (const p of planned) {
      for (const i of p.result.issues) {
        const line = formatIssue(p.result.file, p.target, i);
        console.error(i.severity === "error" ? line.replace(": error:", `: ${style.red("error")}:`) : line);
      }
    }
    console.error(summary(results, Boolean(opts.check)));
  }
  if (hasErrors(results) || (opts.check && results.some((r) => r.changed))) throw new CliExit(1);
}

/** Parses a `--version N` flag. */
function versionFlag(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) {
    throw usageError("invalid_version", `--version must be a number ≥ 1, got ${JSON.stringify(v)}`);
  }
  return Number(v);
}

/** Writes a file whole or not at all (temp file + rename), so an interrupted export leaves nothing half-written. */
async function writeWhole(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw new StationError("write_failed", `cannot write ${path}: ${(err as Error).message}`, {
      hint: "check the path",
    });
  }
}

/** `stn workflow …`; returns the `workflow` command so other parts can add subcommands (run, runs, …). */
export function workflowCommand(program: Command): Command {
  const wf = program.command("workflow").alias("workflows").description(
    "validate, store, inspect and remove workflow definitions",
  );

  wf.command("validate <files...>")
    .description(
      "check definition files without a server; prints file:line:col: error CODE: message (exit 1 if any is invalid)",
    )
    .action(async (files: string[], _o: unknown, cmd: Command) => {
      await validateFiles(files, Boolean(globals(cmd).json));
    });

  wf.command("migrate <path>")
    .description(
      "convert Station definitions (Starlark, {{ }} templates, API bodies) to stn's; reports what it cannot convert (exit 1)",
    )
    .option("-o, --output <path>", "write here (a file, or a directory for a directory); default: stdout")
    .option("--check", "change nothing: report what would be converted and what cannot be (exit 1 if either)")
    .addHelpText(
      "after",
      "\nSee docs/migrating-from-station.md for what is converted and how stn differs from Station.",
    )
    .action(async (path: string, opts: { output?: string; check?: boolean }, cmd: Command) => {
      await migrateFiles(path, opts, Boolean(globals(cmd).json));
    });

  wf.command("apply <files...>")
    .description("store definition files on the server (a new version only when the content changed)")
    .action(async (files: string[], _o: unknown, cmd: Command) => {
      const loaded: Array<{ file: string } & ValidationResult> = [];
      for (const file of files) loaded.push({ file, ...(await loadWorkflowFile(file)) });
      const bad = loaded.filter((l) => !l.valid);
      if (bad.length) {
        for (const b of bad) {
          for (const e of b.errors) for (const l of issueLines(b.file, e, "error")) console.error(l);
        }
        throw new StationError("workflow_invalid", `${bad.length} file(s) are invalid; nothing was stored`, {
          hint: "fix them (`stn workflow validate FILE`) and apply again",
        });
      }
      await withStation(cmd, async (client) => {
        const out = [];
        for (const l of loaded) out.push({ file: l.file, ...(await saveWorkflow(client, l.definition)) });
        if (globals(cmd).json) return printJson(out);
        for (const o of out) console.log(`${o.workflow.id}: ${o.outcome} (version ${o.version})`);
      });
    });

  wf.command("list")
    .description("list stored workflows")
    .addOption(
      new Option("--status <status>", "only active or disabled workflows").choices(["active", "disabled"]),
    )
    .action(async (opts: { status?: "active" | "disabled" }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const list = await listWorkflows(client, opts.status);
        if (globals(cmd).json) return printJson(list);
        if (list.length === 0) {
          return console.log("no workflows (add files to environments/<env>/workflows and run `stn sync`)");
        }
        printTable(
          ["ID", "VERSION", "STATUS", "SOURCE", "NAME", "UPDATED"],
          list.map((w) => [
            w.id,
            String(w.version),
            w.status,
            w.source === "file" ? `file:${w.environment}` : "api",
            w.name ?? "",
            w.updated_at,
          ]),
        );
      });
    });

  wf.command("show <id>")
    .description("show a workflow, its versions, and with --definition its definition")
    .option("--version <n>", "a stored version (default: the latest)")
    .option("--definition", "print the normalised definition (YAML; JSON with --json)")
    .action(async (id: string, opts: { version?: string; definition?: boolean }, cmd: Command) => {
      const version = versionFlag(opts.version);
      await withStation(cmd, async (client) => {
        const shown = await getWorkflow(client, id, version);
        const versions = await listWorkflowVersions(client, id);
        if (globals(cmd).json) return printJson({ ...shown, versions });
        if (opts.definition) return void console.log(stringify(shown.definition).trimEnd());
        const w = shown.workflow;
        printFields([
          ["id", w.id],
          ["name", w.name ?? ""],
          ["status", w.status],
          ["version", `${shown.version} of ${w.version}${shown.label ? ` (label ${shown.label})` : ""}`],
          ["source", w.source === "file" ? `file ${w.source_path} (environment ${w.environment})` : "api"],
          ["states", shown.definition.states.map((s) => `${s.id}:${s.type}`).join(", ")],
          ["updated", w.updated_at],
        ]);
        console.log("");
        printTable(
          ["VERSION", "CREATED", "LABEL", "HASH"],
          versions.map((v) => [String(v.version), v.created_at, v.label ?? "", v.hash.slice(0, 12)]),
        );
      });
    });

  wf.command("export <id>")
    .description("print a stored definition as YAML, or write it to a file")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .option("--version <n>", "a stored version (default: the latest)")
    .action(async (id: string, opts: { output?: string; version?: string }, cmd: Command) => {
      const version = versionFlag(opts.version);
      await withStation(cmd, async (client) => {
        const shown = await getWorkflow(client, id, version);
        const text = stringify(shown.definition);
        if (!opts.output) return void Deno.stdout.writeSync(new TextEncoder().encode(text));
        await writeWhole(opts.output, text);
        console.error(`wrote ${id} version ${shown.version} to ${opts.output}`);
      });
    });

  wf.command("enable <id>")
    .description("re-enable a disabled workflow")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const { workflow } = await enableWorkflow(client, id);
        if (globals(cmd).json) return printJson(workflow);
        console.log(`${id}: ${workflow.status}`);
      });
    });

  wf.command("delete <id>")
    .description("disable a workflow (kept with its versions); --force deletes it and every version")
    .option("--force", "delete instead of disabling")
    .action(async (id: string, opts: { force?: boolean }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        if (opts.force) {
          const r = await purgeWorkflow(client, id);
          if (globals(cmd).json) return printJson(r);
          return console.log(`${id}: deleted`);
        }
        const { workflow } = await disableWorkflow(client, id);
        if (globals(cmd).json) return printJson(workflow);
        console.log(`${id}: disabled (\`stn workflow enable ${id}\` undoes it; --force deletes)`);
      });
    });

  return wf;
}

/** `stn sync [env]`: DeclarativeSync of an environment's workflow files. */
export function syncCommand(program: Command): void {
  program.command("sync [environment]")
    .description(
      "load environments/<env>/workflows/*.workflow.{yaml,yml,json} into the station (default env: workflows.environment)",
    )
    .action(async (environment: string | undefined, _o: unknown, cmd: Command) => {
      // An embedded runtime would sync at its own start and this report would then say "unchanged" for
      // everything it just created; this command is the sync, so that start-up one is switched off.
      const report = await withStation(cmd, (client) => syncWorkflows(client, environment), {
        embeddedFlags: { "workflows.sync_on_start": false },
      });
      if (globals(cmd).json) printJson(report);
      else {
        const line = (what: string, items: Array<{ id: string; version: number }>) =>
          items.length && console.log(`${what}: ${items.map((i) => `${i.id} (v${i.version})`).join(", ")}`);
        line("created", report.created);
        line("updated", report.updated);
        line("unchanged", report.unchanged);
        if (report.enabled.length) console.log(`re-enabled: ${report.enabled.join(", ")}`);
        if (report.disabled.length) console.log(`disabled (file removed): ${report.disabled.join(", ")}`);
        for (const inv of report.invalid) {
          for (const l of formatInvalid(inv)) console.error(`${style.red("invalid:")} ${l}`);
        }
        console.log(
          `environment ${report.environment}: ${report.created.length} created, ${report.updated.length} updated, ` +
            `${report.unchanged.length} unchanged, ${report.disabled.length} disabled, ${report.invalid.length} invalid`,
        );
      }
      if (report.invalid.length > 0) {
        if (!globals(cmd).json) {
          console.error(`${style.red("error:")} ${report.invalid.length} invalid file(s) were skipped`);
          console.error(
            `${
              style.dim("hint:")
            } \`stn workflow validate ${report.directory}/*\` shows each issue with its hint`,
          );
        }
        throw new CliExit(1);
      }
    });
}
