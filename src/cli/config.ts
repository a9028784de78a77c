/** `stn config show` and `stn config migrate`: the configuration in effect, and Station's config as stn's. */

import type { Command } from "./command.ts";
import { stringify } from "yaml";
import { migrateStationConfig } from "../config/migrate_station.ts";
import { resolveHome, stationPaths } from "../config/paths.ts";
import { errorMessage, usageError } from "../errors.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { commandConfig, globals, jsonMode } from "./context.ts";
import { note, render } from "./output.ts";

// Values shown as *** by `config show`: tokens, keys, passwords, webhook secrets.
const SECRET = /(token|api_key|password|secret)$/;

function redact(value: unknown, key = ""): unknown {
  if (SECRET.test(key) && value !== undefined) return "***";
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  }
  return value;
}

/** The suffix of the copy `--write` keeps of the file it rewrites. */
export const BACKUP_SUFFIX = ".station-backup";

interface MigrateResult {
  file: string;
  /** Where the migrated config was written; null when it went to stdout. */
  output: string | null;
  /** The untouched copy of the original (with --write). */
  backup: string | null;
  changes: string[];
  text: string;
}

async function readConfigText(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw usageError("config_not_found", `${file}: no such file`, "give the file with --config");
    }
    throw usageError("config_unreadable", `${file}: cannot be read: ${errorMessage(err)}`);
  }
}

/** Writes a new file only: an existing one is never replaced. */
async function writeNew(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  try {
    await Deno.writeFile(path, typeof data === "string" ? new TextEncoder().encode(data) : data, {
      createNew: true,
      mode,
    });
    await Deno.chmod(path, mode);
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) {
      throw usageError(
        "invalid_usage",
        `${path} exists: nothing was written`,
        "choose another path or move it",
      );
    }
    throw err;
  }
}

async function migrate(file: string, opts: { output?: string; write?: boolean }): Promise<MigrateResult> {
  if (opts.output && opts.write) {
    throw usageError("invalid_usage", "--output and --write exclude each other", "give one of them");
  }
  const original = await readConfigText(file);
  const { text, changes } = migrateStationConfig(original, file);
  const result: MigrateResult = { file, output: null, backup: null, changes, text };
  if (changes.length === 0) return result;
  const mode = (await Deno.stat(file)).mode! & 0o777;
  if (opts.output) {
    await writeNew(opts.output, text, 0o600);
    result.output = opts.output;
  } else if (opts.write) {
    // The exact bytes first, as a new file: the rewrite happens only once they are safe.
    result.backup = file + BACKUP_SUFFIX;
    await writeNew(result.backup, await Deno.readFile(file), mode);
    await writeFileAtomic(file, text, { mode });
    result.output = file;
  }
  return result;
}

function migrateText(r: MigrateResult): string[] {
  if (r.changes.length === 0) return [`${r.file}: no Station keys, nothing to migrate`];
  if (r.output === null) return [r.text.trimEnd()];
  return [
    `${r.output}: written${r.backup ? ` (the original is ${r.backup})` : ""}`,
    ...r.changes.map((c) => `  ${c}`),
  ];
}

/** `stn config show|migrate`. */
export function configCommand(program: Command): void {
  const config = program.command("config").description("the configuration in effect, and Station's as stn's");

  config.command("show")
    .description(
      "print the configuration in effect (defaults, config.yaml, environment, flags), secrets as ***",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await commandConfig(cmd);
      const result = {
        file: c.file,
        home: c.paths.home,
        ledger: c.paths.db,
        station_db: c.paths.foreignDb,
        warnings: c.warnings,
        values: redact(c.values),
      };
      render(result, {
        json: jsonMode(cmd),
        text: (r) => [
          `# file: ${r.file ?? "none (defaults)"}`,
          `# ledger: ${r.ledger}${r.station_db ? ` (Station's ${r.station_db} is left untouched)` : ""}`,
          stringify(r.values).trimEnd(),
        ],
      });
    });

  config.command("migrate")
    .description(
      "Station's config.yaml as stn's: its keys moved to stn's, the rest listed in a comment " +
        "(stdout by default; writes a new file with -o, or rewrites it with --write after a backup)",
    )
    .option("-o, --output <file>", "write the result to this new file (never replaces one)")
    .option("--write", `rewrite the config file itself, first copying it to <file>${BACKUP_SUFFIX}`)
    .addHelpText(
      "after",
      "\nComments stay. Only use --write once Station no longer runs from this home: Station reads the same" +
        "\nconfig.yaml and would lose its keys. Without --write stn reads Station's keys as they are, with a" +
        "\nwarning each (docs/migrating-from-station.md#the-config).",
    )
    .action(async (opts: { output?: string; write?: boolean }, cmd: Command) => {
      // Not loadConfig: a config it refuses (a cloudshipai provider) is what needs migrating.
      const file = globals(cmd).config ?? stationPaths(resolveHome()).config;
      const r = await migrate(file, opts);
      if (r.output === null && r.changes.length) note(r.changes.map((c) => `migrate: ${c}`));
      render(r, { json: jsonMode(cmd), text: migrateText });
    });
}
