/**
 * Eval datasets (docs/evals.md#datasets): a JSONL file of cases, or a YAML/JSON file with settings and
 * `cases:`; parsed and checked with each problem at its line, and the files an environment keeps in evals/.
 */

import { basename, join } from "node:path";
import type { z } from "zod";
import { EvalCaseInput, EvalDataset } from "../contract/evals.ts";
import { errorMessage, StationError } from "../errors.ts";
import { parseYaml, yamlData } from "../lib/yaml.ts";

/** The file names a dataset may have. */
export const DATASET_FILE = /\.(jsonl|ya?ml|json)$/;

const HINT = 'a JSONL dataset has one case per line ({"task": …, "expected": …}); see docs/evals.md#datasets';

/** One problem of a dataset file. */
export interface DatasetIssue {
  line: number | null;
  path: string;
  message: string;
}

function zodIssues(error: z.ZodError, line: number | null, prefix: string): DatasetIssue[] {
  return error.issues.map((i) => ({
    line,
    path: [prefix, ...i.path.map(String)].filter(Boolean).join("."),
    message: i.message,
  }));
}

function invalid(name: string, issues: DatasetIssue[]): StationError {
  const first = issues[0];
  const where = first.line ? `line ${first.line}: ` : first.path ? `${first.path}: ` : "";
  return new StationError(
    "eval_dataset_invalid",
    `dataset ${name}: ${where}${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`,
    { status: 400, hint: HINT, details: { issues } },
  );
}

function parseJsonl(text: string, name: string): EvalDataset {
  const cases: EvalCaseInput[] = [];
  const issues: DatasetIssue[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("//")) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      issues.push({ line: i + 1, path: "", message: `not JSON: ${errorMessage(err)}` });
      return;
    }
    const parsed = EvalCaseInput.safeParse(value);
    if (parsed.success) cases.push({ id: parsed.data.id ?? `case-${i + 1}`, ...parsed.data });
    else issues.push(...zodIssues(parsed.error, i + 1, ""));
  });
  if (issues.length) throw invalid(name, issues);
  if (cases.length === 0) throw invalid(name, [{ line: null, path: "", message: "it has no cases" }]);
  return { cases };
}

function parseDocument(text: string, name: string): EvalDataset {
  const doc = parseYaml(text);
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw invalid(name, [{ line: e.linePos?.[0].line ?? null, path: "", message: e.message.split("\n")[0] }]);
  }
  let data: unknown;
  try {
    data = yamlData(doc);
  } catch (err) {
    throw invalid(name, [{ line: null, path: "", message: errorMessage(err) }]);
  }
  const parsed = EvalDataset.safeParse(Array.isArray(data) ? { cases: data } : data);
  if (!parsed.success) throw invalid(name, zodIssues(parsed.error, null, ""));
  return {
    ...parsed.data,
    cases: parsed.data.cases.map((c, i) => ({ id: c.id ?? `case-${i + 1}`, ...c })),
  };
}

/** Parses a dataset file's text (by its name: JSONL, else YAML/JSON); every case gets an id. */
export function parseDataset(text: string, name: string): EvalDataset {
  const dataset = name.endsWith(".jsonl") ? parseJsonl(text, name) : parseDocument(text, name);
  const seen = new Set<string>();
  for (const c of dataset.cases) {
    if (seen.has(c.id!)) {
      throw invalid(name, [{ line: null, path: "cases", message: `two cases have the id ${c.id}` }]);
    }
    seen.add(c.id!);
  }
  return { ...dataset, name: dataset.name ?? basename(name).replace(DATASET_FILE, "") };
}

/** Checks a dataset sent inline (the API's body): unique ids, and an id for each case by its position. */
export function checkDataset(dataset: EvalDataset, name: string): EvalDataset {
  const withIds = { ...dataset, cases: dataset.cases.map((c, i) => ({ id: c.id ?? `case-${i + 1}`, ...c })) };
  const ids = withIds.cases.map((c) => c.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw invalid(name, [{ line: null, path: "cases", message: `two cases have the id ${dup}` }]);
  return { ...withIds, name: dataset.name ?? name };
}

/** The folder of an environment's datasets. */
export function datasetDir(environmentsDir: string, environment: string): string {
  return join(environmentsDir, environment, "evals");
}

/** Reads a dataset file of an environment's evals/ folder by its name (no path outside the folder). */
export async function readEnvironmentDataset(dir: string, file: string): Promise<EvalDataset> {
  if (file !== basename(file) || !DATASET_FILE.test(file)) {
    throw new StationError("eval_dataset_not_found", `no dataset ${file} in ${dir}`, {
      status: 404,
      hint:
        "name a .jsonl, .yaml or .json file of environments/<env>/evals/ (`stn eval datasets` lists them)",
    });
  }
  let text: string;
  try {
    text = await Deno.readTextFile(join(dir, file));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    throw new StationError("eval_dataset_not_found", `no dataset ${file} in ${dir}`, {
      status: 404,
      hint: "`stn eval datasets` lists them; `stn eval generate <agent>` writes one",
    });
  }
  return parseDataset(text, file);
}

/** The dataset files of an environment, each with its case count or why it does not parse. */
export async function listDatasets(
  dir: string,
): Promise<Array<{ name: string; cases: number | null; error: string | null }>> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) if (e.isFile && DATASET_FILE.test(e.name)) names.push(e.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  names.sort();
  return await Promise.all(names.map(async (name) => {
    try {
      return { name, cases: (await readEnvironmentDataset(dir, name)).cases.length, error: null };
    } catch (err) {
      return { name, cases: null, error: errorMessage(err) };
    }
  }));
}
