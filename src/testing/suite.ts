/** Running a loaded suite against a station: cases filtered, run concurrently, the first failure stopping it with bail. */

import { ulid } from "ulid";
import type { CaseResult, TestCase, TestRun } from "../contract/tests.ts";
import { getWorkflow } from "../client/workflows.ts";
import { mapLimit } from "../lib/async.ts";
import { coverage } from "./coverage.ts";
import type { LoadedCase, LoadedSuite } from "./load.ts";
import { type CaseOutcome, runCase, type TestTarget, type WorkflowTrace } from "./run_case.ts";

/** Where cases run: the main target, and for a case that needs another kind of station (`realtime`, `sandbox: mock`), that one. */
export interface SuiteTargets {
  main: TestTarget;
  /** The station a case runs on (started on first use); without it every case runs on `main`. */
  pick?: (c: TestCase) => Promise<TestTarget>;
}

/** How a suite runs. */
export interface SuiteOptions {
  /** Only cases whose `file › name` contains this. */
  filter?: string;
  /** Cases at a time. */
  parallel: number;
  /** Stop starting cases after the first failure. */
  bail?: boolean;
  /** Called as each case ends (progress on a TTY). */
  onCase?: (result: CaseResult, done: number, total: number) => void;
}

/** A case's display name: `file › name`. */
export const caseTitle = (c: { file: string; name: string }) => `${c.file} › ${c.name}`;

/** The cases a filter keeps. */
export function selectCases(cases: LoadedCase[], filter?: string): LoadedCase[] {
  if (!filter) return cases;
  return cases.filter((c) => caseTitle({ file: c.file, name: c.case.name }).includes(filter));
}

/** A test run that has not started its cases yet (or found invalid files, then it never does). */
export function newTestRun(environment: string, suite: LoadedSuite): TestRun {
  return {
    id: ulid(),
    environment,
    status: suite.invalid.length ? "invalid" : "running",
    started_at: new Date().toISOString(),
    finished_at: null,
    duration_ms: null,
    summary: { total: 0, passed: 0, failed: 0 },
    cases: [],
    coverage: [],
    invalid: suite.invalid,
  };
}

/** Runs the suite's cases against the target and fills in `run` (results, summary, coverage, status). */
export async function runSuite(
  targets: SuiteTargets,
  suite: LoadedSuite,
  run: TestRun,
  options: SuiteOptions,
): Promise<TestRun> {
  const started = performance.now();
  if (run.status === "invalid") return finish(run, started);
  const cases = selectCases(suite.cases, options.filter);
  let bailed = false;
  let done = 0;
  const outcomes = await mapLimit(
    cases,
    Math.max(1, options.parallel),
    async (c): Promise<CaseOutcome | null> => {
      if (bailed) return null;
      const target = targets.pick ? await targets.pick(c.case) : targets.main;
      const o = await runCase(target, c);
      if (options.bail && o.result.status === "failed") bailed = true;
      run.cases.push(o.result);
      options.onCase?.(o.result, ++done, cases.length);
      return o;
    },
  );
  const kept = outcomes.filter((o): o is CaseOutcome => o !== null);
  // Results in the suite's order, not the order they ended in.
  run.cases = kept.map((o) => o.result);
  const traces = kept.flatMap((o) => o.trace ? [o.trace] : []);
  run.coverage = coverage(traces, await definitions(targets.main, traces));
  run.summary = {
    total: run.cases.length,
    passed: run.cases.filter((c) => c.status === "passed").length,
    failed: run.cases.filter((c) => c.status === "failed").length,
  };
  run.status = run.summary.failed > 0 ? "failed" : "passed";
  return finish(run, started);
}

/** The stored definitions of the workflows the traces ran (coverage is measured against them). */
async function definitions(target: TestTarget, traces: WorkflowTrace[]) {
  const ids = [...new Set(traces.map((t) => t.workflow))];
  const defs = new Map<string, { states?: unknown }>();
  for (const id of ids) {
    const shown = await getWorkflow(target.client, id).catch(() => undefined);
    if (shown) defs.set(id, shown.definition as { states?: unknown });
  }
  return defs;
}

function finish(run: TestRun, started: number): TestRun {
  run.finished_at = new Date().toISOString();
  run.duration_ms = Math.round(performance.now() - started);
  return run;
}
