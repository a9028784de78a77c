/** `stn workflow validate|apply|list|show|export|enable|delete|migrate`: workflow definitions from the CLI. */

import { lazyImport } from "../lib/lazy_import.ts";
import { type Command, Option } from "./command.ts";
import { dirname, join } from "../lib/path.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { formatIssue } from "../workflows/definition/format.ts";
import type { ValidationIssue, ValidationResult } from "../workflows/definition/validate.ts";
import { formatMigrationIssue, hasErrors, summary } from "../workflows/migrate/report.ts";
import { jsonMode, withStation } from "./context.ts";
import { localFileError, readLocalText, STDIN_NAME } from "./local_files.ts";
import { fail, fields, note, render, type Style, table } from "./output.ts";

// The definitions' client and its contracts load when a definition command runs, not for every command of
// the `workflow` group (`stn workflow runs`: docs/benchmarks.md, client commands).
const definitions = () =>
  lazyImport<typeof import("../client/workflows.ts")>("../client/workflows.ts", import.meta.url);

/** A validation issue in the CLI's colours (`validate`, `apply`, `run FILE`). */
export function issueLines(
  file: string,
  issue: ValidationIssue,
  severity: "error" | "warning",
  style: Style,
): string[] {
  return formatIssue(file, issue, severity, { error: style.red, warning: style.yellow, dim: style.dim });
}

/** One definition file's validation, as `workflow validate --json` shows it. */
type FileResult = { file: string } & ValidationResult;

/**
 * Reads and validates definition files (`-` is stdin, at most once). An unreadable file is one more
 * invalid result for `validate`, which reports on every file; `apply` (unreadable: "throw") stops.
 */
async function validateFiles(
  files: string[],
  options: { unreadable: "issue" | "throw" },
): Promise<FileResult[]> {
  if (files.filter((f) => f === "-").length > 1) {
    throw usageError("stdin_twice", "`-` (stdin) can be given only once", "pass the other files by path");
  }
  // The validator (Ajv, JSONata) loads only for the commands that validate locally.
  const { validateSource } = await lazyImport<typeof import("../workflows/definition/load.ts")>(
    "../workflows/definition/load.ts",
    import.meta.url,
  );
  const results: FileResult[] = [];
  for (const file of files) {
    const name = file === "-" ? STDIN_NAME : file;
    let text: string;
    try {
      text = await readLocalText(file);
    } catch (err) {
      const e = localFileError(file, err);
      if (options.unreadable === "throw") throw e;
      const issue = { code: "file_unreadable", path: "/", message: e.message, hint: e.hint };
      results.push({ file: name, valid: false, errors: [issue], warnings: [] });
      continue;
    }
    results.push({ file: name, ...validateSource(text, { fileName: file === "-" ? undefined : file }) });
  }
  return results;
}

/** What `validate` and `apply` show of a file: everything but the parsed definition. */
const reported = ({ definition: _d, ...r }: FileResult) => r;

function validateText(report: { files: ReturnType<typeof reported>[] }, style: Style): string[] {
  const lines: string[] = [];
  for (const r of report.files) {
    for (const e of r.errors) lines.push(...issueLines(r.file, e, "error", style));
    for (const w of r.warnings) lines.push(...issueLines(r.file, w, "warning", style));
    if (r.valid) {
      const n = r.warnings.length;
      lines.push(`${r.file}: ${style.green("ok")}${n ? ` (${n} warning${n === 1 ? "" : "s"})` : ""}`);
    }
  }
  return lines;
}

/** `workflow migrate`: converts, writes (or prints), reports; exit 1 on anything unconvertible (or, with --check, any change). */
async function migrateFiles(
  path: string,
  opts: { output?: string; check?: boolean },
  json: boolean,
): Promise<void> {
  const { planMigration } = await lazyImport<typeof import("../workflows/migrate/files.ts")>(
    "../workflows/migrate/files.ts",
    import.meta.url,
  );
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
  const report = { files: results.map(({ text, ...r }) => (opts.output || opts.check ? r : { ...r, text })) };
  // The converted text (when not written to files) is the result people see; issues go to stderr.
  const view = { json, text: () => {} };
  if (!json) {
    note((style) =>
      planned.flatMap((p) =>
        p.result.issues.map((i) => {
          const line = formatMigrationIssue(p.result.file, p.target, i);
          return i.severity === "error" ? line.replace(": error:", `: ${style.red("error")}:`) : line;
        })
      )
    );
    note(summary(results, Boolean(opts.check)));
  }
  if (hasErrors(results)) {
    fail(
      report,
      view,
      new StationError("migration_incomplete", "some constructs could not be converted", {
        hint: "each `error:` line says what and why; convert those by hand (docs/migrating-from-station.md)",
      }),
    );
  }
  if (opts.check && results.some((r) => r.changed)) {
    fail(
      report,
      view,
      new StationError("migration_pending", "files would change", {
        hint: "run without --check to convert them",
      }),
    );
  }
  render(report, view);
}

/** Parses a `--version N` flag. */
/** A --version flag as a stored version number (≥ 1); undefined when not given. */
export function versionFlag(v: string | undefined): number | undefined {
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
    throw new StationError("write_failed", `cannot write ${path}: ${errorMessage(err)}`, {
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
      "check definition files (- for stdin) without a server; prints file:line:col: error CODE: message (exit 1 if any is invalid)",
    )
    .action(async (files: string[], _o: unknown, cmd: Command) => {
      const results = await validateFiles(files, { unreadable: "issue" });
      const invalid = results.filter((r) => !r.valid).length;
      const report = { valid: invalid === 0, files: results.map(reported) };
      const view = { json: jsonMode(cmd), text: validateText };
      if (!invalid) return render(report, view);
      fail(
        report,
        view,
        new StationError("workflow_invalid", `${invalid} of ${results.length} files are invalid`, {
          status: 400,
        }),
      );
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
      await migrateFiles(path, opts, jsonMode(cmd));
    });

  wf.command("apply <files...>")
    .description(
      "store definition files (- for stdin) on the server (a new version only when the content changed)",
    )
    .action(async (files: string[], _o: unknown, cmd: Command) => {
      const loaded = await validateFiles(files, { unreadable: "throw" });
      const bad = loaded.filter((l) => !l.valid);
      if (bad.length) {
        note((style) => bad.flatMap((b) => b.errors.flatMap((e) => issueLines(b.file, e, "error", style))));
        throw new StationError("workflow_invalid", `${bad.length} file(s) are invalid; nothing was stored`, {
          status: 400,
          hint: "fix them (`stn workflow validate FILE`) and apply again",
          details: { valid: false, files: loaded.map(reported) },
        });
      }
      await withStation(cmd, async (client) => {
        const applied = [];
        for (const l of loaded) {
          applied.push({ file: l.file, ...(await (await definitions()).saveWorkflow(client, l.definition)) });
        }
        render({ files: applied }, {
          json: jsonMode(cmd),
          text: (r) => r.files.map((o) => `${o.workflow.id}: ${o.outcome} (version ${o.version})`),
        });
      });
    });

  wf.command("list")
    .description("list stored workflows")
    .addOption(
      new Option("--status <status>", "only active or disabled workflows").choices(["active", "disabled"]),
    )
    .action(async (opts: { status?: "active" | "disabled" }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const workflows = await (await definitions()).listWorkflows(client, opts.status);
        render({ workflows }, {
          json: jsonMode(cmd),
          text: (r) =>
            r.workflows.length === 0
              ? "no workflows (add files to environments/<env>/workflows and run `stn sync`)"
              : table(
                ["ID", "VERSION", "STATUS", "SOURCE", "NAME", "UPDATED"],
                r.workflows.map((w) => [
                  w.id,
                  String(w.version),
                  w.status,
                  w.source === "file" ? `file:${w.environment}` : "api",
                  w.name ?? "",
                  w.updated_at,
                ]),
              ),
        });
      });
    });

  wf.command("show <id>")
    .description("show a workflow, its versions, and with --definition its definition")
    .option("--version <n>", "a stored version (default: the latest)")
    .option("--definition", "print the normalised definition (YAML; JSON with --json)")
    .action(async (id: string, opts: { version?: string; definition?: boolean }, cmd: Command) => {
      const version = versionFlag(opts.version);
      await withStation(cmd, async (client) => {
        const shown = await (await definitions()).getWorkflow(client, id, version);
        const versions = await (await definitions()).listWorkflowVersions(client, id);
        // The YAML package is loaded only for --definition (~25 ms of a command's start).
        const definition = opts.definition
          ? (await lazyImport<typeof import("../lib/yaml.ts")>("../lib/yaml.ts", import.meta.url)).yamlText(
            shown.definition,
          ).trimEnd()
          : undefined;
        render({ ...shown, versions }, {
          json: jsonMode(cmd),
          text: (r) => {
            if (definition !== undefined) return definition;
            const w = r.workflow;
            return [
              ...fields([
                ["id", w.id],
                ["name", w.name ?? ""],
                ["status", w.status],
                ["version", `${r.version} of ${w.version}${r.label ? ` (label ${r.label})` : ""}`],
                [
                  "source",
                  w.source === "file" ? `file ${w.source_path} (environment ${w.environment})` : "api",
                ],
                ["states", r.definition.states.map((s) => `${s.id}:${s.type}`).join(", ")],
                ["updated", w.updated_at],
              ]),
              "",
              ...table(
                ["VERSION", "CREATED", "LABEL", "HASH"],
                r.versions.map((v) => [String(v.version), v.created_at, v.label ?? "", v.hash.slice(0, 12)]),
              ),
            ];
          },
        });
      });
    });

  wf.command("export <id>")
    .description(
      "print a stored definition as YAML, or write it to a file (--json: {id, version, definition})",
    )
    .option("-o, --output <file>", "write to this file instead of stdout")
    .option("--version <n>", "a stored version (default: the latest)")
    .action(async (id: string, opts: { output?: string; version?: string }, cmd: Command) => {
      const version = versionFlag(opts.version);
      await withStation(cmd, async (client) => {
        const shown = await (await definitions()).getWorkflow(client, id, version);
        const text = (await lazyImport<typeof import("../lib/yaml.ts")>("../lib/yaml.ts", import.meta.url))
          .yamlText(shown.definition);
        if (!opts.output) {
          return render({ id, version: shown.version, definition: shown.definition }, {
            json: jsonMode(cmd),
            text: () => void Deno.stdout.writeSync(new TextEncoder().encode(text)),
          });
        }
        await writeWhole(opts.output, text);
        note(`wrote ${id} version ${shown.version} to ${opts.output}`);
        render({ id, version: shown.version, path: opts.output }, { json: jsonMode(cmd) });
      });
    });

  wf.command("enable <id>")
    .description("re-enable a disabled workflow")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const { workflow } = await (await definitions()).enableWorkflow(client, id);
        render(workflow, { json: jsonMode(cmd), text: (w) => `${id}: ${w.status}` });
      });
    });

  wf.command("delete <id>")
    .description("disable a workflow (kept with its versions); --force deletes it and every version")
    .option("-f, --force", "delete instead of disabling")
    .action(async (id: string, opts: { force?: boolean }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        if (opts.force) {
          return render(await (await definitions()).purgeWorkflow(client, id), {
            json: jsonMode(cmd),
            text: () => `${id}: deleted`,
          });
        }
        const { workflow } = await (await definitions()).disableWorkflow(client, id);
        render(workflow, {
          json: jsonMode(cmd),
          text: () => `${id}: disabled (\`stn workflow enable ${id}\` undoes it; --force deletes)`,
        });
      });
    });

  return wf;
}
