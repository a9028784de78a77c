/** Which files a `stn workflow migrate` argument names, and where each converted file goes. */

import { basename, join } from "node:path";
import { errorMessage, StationError, usageError } from "../../errors.ts";
import { WORKFLOW_FILE } from "../definition/file_name.ts";
import { migrateText } from "./migrate.ts";
import type { MigrationResult } from "./report.ts";

/** Which files a `stn workflow migrate` argument names, and where each converted file goes. */

/** One migrated file and where its text is to be written (none for stdout or --check). */
export interface PlannedFile {
  result: MigrationResult;
  /** Output path; undefined means stdout. */
  target?: string;
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

async function read(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    throw new StationError("local_file_unreadable", `cannot read ${path}: ${errorMessage(err)}`, {
      hint: "check the path and the file's permissions",
    });
  }
}

/**
 * Migrates a file or every `*.workflow.{yaml,yml,json}` of a directory (not recursive, like
 * Station's loader). A directory needs `out` (a directory) unless nothing is written (`check`); a
 * file goes to `out` (a file, or into it when it is a directory) or stdout.
 */
export async function planMigration(
  input: string,
  out: string | undefined,
  check: boolean,
): Promise<PlannedFile[]> {
  const info = await statOrNull(input);
  if (!info) {
    throw new StationError("local_file_not_found", `cannot read ${input}: no such file or directory`, {
      hint: "give a definition file or a directory of them",
    });
  }
  if (info.isDirectory) {
    if (!out && !check) {
      throw usageError(
        "output_required",
        "migrating a directory needs -o DIR (the Station files are left as they are)",
        `stn workflow migrate ${input} -o converted/ (or --check to only report)`,
      );
    }
    const names = [...Deno.readDirSync(input)].filter((e) => e.isFile && WORKFLOW_FILE.test(e.name)).map((
      e,
    ) => e.name)
      .sort();
    if (names.length === 0) {
      throw usageError(
        "no_workflow_files",
        `${input} has no *.workflow.yaml|yml|json files`,
        "pass a file to migrate it",
      );
    }
    const planned: PlannedFile[] = [];
    for (const name of names) {
      const file = join(input, name);
      planned.push({
        result: migrateText(await read(file), file),
        target: out ? join(out, name) : undefined,
      });
    }
    return planned;
  }
  const outInfo = out ? await statOrNull(out) : null;
  const target = out && outInfo?.isDirectory ? join(out, basename(input)) : out;
  const format = /\.json$/i.test(target ?? input) ? "json" : "yaml";
  return [{ result: migrateText(await read(input), input, format), target }];
}
