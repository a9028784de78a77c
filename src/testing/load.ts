/** Test files: finding them, parsing them with positions and checking them against the contract (TestFile). */

import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { z } from "zod";
import { AgentTestCase, type TestCase, WorkflowTestCase } from "../contract/tests.ts";
import type { ValidationIssue } from "../workflows/definition/validate.ts";
import { parseSource, toPointer } from "../workflows/definition/source.ts";
import { parseCheck } from "../workflows/expr.ts";
import type { InvalidFile } from "../workflows/definition/format.ts";

/** A case as loaded: its file (as the user names it) and the folder its cassettes are relative to. */
export interface LoadedCase {
  file: string;
  dir: string;
  case: TestCase;
}

/** What loading a set of test files gave: the valid cases, and the files that did not validate. */
export interface LoadedSuite {
  cases: LoadedCase[];
  invalid: InvalidFile[];
}

/** A source of files: the file system, or the files a POST /api/v1/tests body carried. */
export type ReadText = (path: string) => Promise<string>;

/** The suffix that makes a YAML (or JSON) file a test file. */
export const TEST_FILE = /\.test\.(ya?ml|json)$/;

/** The test files of an environment (`tests/*.test.yaml`), sorted; none when it has no tests folder. */
export async function environmentTestFiles(envDir: string): Promise<string[]> {
  const dir = join(envDir, "tests");
  const found: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && TEST_FILE.test(e.name)) found.push(join(dir, e.name));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return found.sort();
}

/** The test files a command-line path names: the file itself, or the test files of a folder. */
export async function filesAt(path: string): Promise<string[]> {
  const info = await Deno.stat(path);
  if (!info.isDirectory) return [path];
  const found: string[] = [];
  for await (const e of Deno.readDir(path)) {
    if (e.isFile && TEST_FILE.test(e.name)) found.push(join(path, e.name));
  }
  return found.sort();
}

const issue = (code: string, path: string, message: string, hint?: string): ValidationIssue => ({
  code,
  path,
  message,
  hint,
});

/** zod's issues as validation issues with stn's codes (unknown keys named, unions explained). */
function zodIssues(error: z.ZodError, prefix: (string | number)[]): ValidationIssue[] {
  return error.issues.map((i) => {
    const path = toPointer([...prefix, ...i.path.map((p) => typeof p === "symbol" ? String(p) : p)]);
    if (i.code === "unrecognized_keys") {
      return issue("unknown_field", path, `unknown field ${i.keys.map((k) => `\`${k}\``).join(", ")}`, HINT);
    }
    if (i.code === "invalid_union") return issue("invalid_value", path, "none of the allowed forms", HINT);
    if (i.code === "invalid_type" && i.message.includes("undefined")) {
      return issue("missing_field", path, i.message, HINT);
    }
    return issue("invalid_value", path, i.message, HINT);
  });
}

const HINT = "docs/testing.md lists each field of a test file and its allowed values";

/** The JSONata a case holds (its output check, tool-call checks, mock expressions), each syntax error at its place. */
function expressionIssues(c: TestCase, i: number): ValidationIssue[] {
  const exprs: Array<[string, (string | number)[]]> = [];
  if (typeof c.expect.output === "string") exprs.push([c.expect.output, ["expect", "output"]]);
  c.expect.tool_calls?.forEach((t, j) => t.args && exprs.push([t.args, ["expect", "tool_calls", j, "args"]]));
  for (const [name, m] of Object.entries(c.mocks ?? {})) {
    const answers = "sequence" in m
      ? m.sequence.map((a, j) => [a, ["sequence", j]] as const)
      : [[m, []] as const];
    for (const [a, at] of answers) if ("expr" in a) exprs.push([a.expr, ["mocks", name, ...at, "expr"]]);
  }
  return exprs.flatMap(([src, at]) => {
    const problem = parseCheck(src);
    if (!problem) return [];
    return [
      issue("invalid_expression", toPointer(["cases", i, ...at]), problem.message, problem.hint ?? HINT),
    ];
  });
}

/** Checks a parsed file's value: its cases, each an agent or a workflow case with unique names. */
function checkFile(value: unknown): { cases: TestCase[]; errors: ValidationIssue[] } {
  const errors: ValidationIssue[] = [];
  const cases: TestCase[] = [];
  const obj = value as Record<string, unknown> | null;
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) {
    return { cases, errors: [issue("invalid_value", "", "a test file is a map with `cases:`", HINT)] };
  }
  for (const key of Object.keys(obj)) {
    if (key !== "cases") {
      errors.push(issue("unknown_field", toPointer([key]), `unknown field \`${key}\``, HINT));
    }
  }
  if (!Array.isArray(obj.cases) || obj.cases.length === 0) {
    errors.push(issue("missing_field", "/cases", "`cases` must be a list of one or more cases", HINT));
    return { cases, errors };
  }
  const names = new Set<string>();
  obj.cases.forEach((c, i) => {
    const raw = c as Record<string, unknown>;
    const schema = raw && typeof raw === "object" && "agent" in raw
      ? AgentTestCase
      : raw && typeof raw === "object" && "workflow" in raw
      ? WorkflowTestCase
      : undefined;
    if (!schema) {
      errors.push(
        issue("missing_field", toPointer(["cases", i]), "a case names an `agent` or a `workflow`", HINT),
      );
      return;
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) return errors.push(...zodIssues(parsed.error, ["cases", i]));
    errors.push(...expressionIssues(parsed.data, i));
    if (names.has(parsed.data.name)) {
      errors.push(
        issue(
          "duplicate_name",
          toPointer(["cases", i, "name"]),
          `case \`${parsed.data.name}\` is named twice`,
        ),
      );
    }
    names.add(parsed.data.name);
    cases.push(parsed.data);
  });
  return { cases, errors };
}

/** Loads test files: valid cases, and each invalid file with its issues at `line:col`. */
export async function loadTestFiles(
  paths: string[],
  read: ReadText = (p) => Deno.readTextFile(p),
  base = Deno.cwd(),
): Promise<LoadedSuite> {
  const suite: LoadedSuite = { cases: [], invalid: [] };
  for (const path of paths) {
    const file = isAbsolute(path) ? relative(base, path) || basename(path) : path;
    const parsed = parseSource(await read(path));
    if ("error" in parsed) {
      const { message, position, code } = parsed.error;
      suite.invalid.push({
        file,
        errors: [{
          code: code ?? "parse_error",
          path: "",
          message,
          line: position?.line,
          column: position?.column,
        }],
      });
      continue;
    }
    const { cases, errors } = checkFile(parsed.value);
    if (errors.length > 0) {
      const segs = (p: string) => p.split("/").slice(1).map((s) => /^\d+$/.test(s) ? Number(s) : s);
      suite.invalid.push({
        file,
        errors: errors.map((e) => {
          const pos = parsed.locate(segs(e.path));
          return { ...e, line: pos?.line, column: pos?.column };
        }),
      });
      continue;
    }
    const dir = dirname(isAbsolute(path) ? path : resolve(base, path));
    for (const c of cases) suite.cases.push({ file, dir, case: c });
  }
  return suite;
}
