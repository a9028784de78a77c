/** `stn test`: runs an environment's test cases on a station of their own and reports them (docs/testing.md). */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { dirname, join, relative } from "node:path";
import { StationClient } from "../client/http.ts";
import type { TestCase, TestRun } from "../contract/tests.ts";
import * as testsAnswers from "../client/answers/tests.ts";
import { StationError, usageError } from "../errors.ts";
import { LOG_LEVELS, setLogLevel } from "../log.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { commandConfig, globals, jsonMode, numberFlag, runtimeOf } from "./context.ts";
import type { StartStation } from "../testing/station.ts";
import { fail, note, outStyle, render, type Style } from "./output.ts";

interface TestOptions {
  env?: string;
  filter?: string;
  parallel?: string;
  bail?: boolean;
  junit?: string;
  coverageMin?: string;
  caseTimeout?: string;
  update?: boolean;
}

/** Exit code of a run: 0 all passed, 1 a case failed (or coverage fell short), 2 a test file is invalid. */
export function testExitCode(run: TestRun, coverageMin?: number): number {
  if (run.status === "invalid") return 2;
  if (run.status === "failed") return 1;
  if (coverageMin !== undefined && run.coverage.some((w) => w.percent < coverageMin)) return 1;
  return 0;
}

/** A positive integer flag, or a usage error naming it. */
function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = numberFlag(value);
  if (typeof n !== "number" || n < 1) {
    throw usageError("invalid_usage", `--${name} must be a positive whole number, got ${value}`);
  }
  return n;
}

/** The test files to run: the paths given (files or folders), else the environment's tests/ folder. */
async function testFiles(paths: string[], envDir: string): Promise<string[]> {
  const { environmentTestFiles, filesAt } = await lazyImport<typeof import("../testing/load.ts")>(
    "../testing/load.ts",
    import.meta.url,
  );
  if (paths.length === 0) return await environmentTestFiles(envDir);
  const out: string[] = [];
  for (const p of paths) {
    try {
      out.push(...await filesAt(p));
    } catch {
      throw usageError(
        "local_file_not_found",
        `${p}: no such file or folder`,
        "give test files or folders of them",
      );
    }
  }
  return out;
}

/** The test files and the cassettes their cases name, as the body of POST /api/v1/tests carries them. */
async function bodyFiles(paths: string[], cassettes: Array<{ path: string; text: string }>) {
  const files = new Map<string, string>();
  for (const p of paths) files.set(relative(Deno.cwd(), p) || p, await Deno.readTextFile(p));
  for (const c of cassettes) files.set(relative(Deno.cwd(), c.path), c.text);
  return [...files].map(([path, text]) => ({ path, text }));
}

/** Registers `stn test`. */
export function testCommand(program: Command): Command {
  return program.command("test")
    .description(
      "run test cases of agents and workflows offline: recorded models, mocked tools, skipped time",
    )
    .argument("[paths...]", "test files or folders (default: environments/<env>/tests/*.test.yaml)")
    .option("--env <name>", "the environment under test (default: workflows.environment from config)")
    .option("--filter <text>", "only cases whose `file › name` contains this")
    .option("--parallel <n>", "cases at a time (default: the number of cores)")
    .option("--bail", "stop after the first failing case")
    .option("--junit <file>", "also write the results as JUnit XML (for CI)")
    .option("--coverage-min <percent>", "fail when a workflow's coverage is under this")
    .option("--case-timeout <seconds>", "fail a case that takes longer (default 120)")
    .option(
      "--update",
      "re-record the cassettes of failing cases against the configured model and live tools",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 all passed, 1 a case failed (or coverage is under --coverage-min), 2 a test file is invalid.\n" +
        "Without --station, one station is started on a temporary home and removed afterwards (docs/testing.md).",
    )
    .action(async (paths: string[], opts: TestOptions, cmd: Command) => {
      // The runner (JSONata, the engine, the station) loads only when `stn test` runs.
      const { loadTestFiles } = await lazyImport<typeof import("../testing/load.ts")>(
        "../testing/load.ts",
        import.meta.url,
      );
      const { newTestRun, runSuite } = await lazyImport<typeof import("../testing/suite.ts")>(
        "../testing/suite.ts",
        import.meta.url,
      );
      const { caseMode, stationPool } = await lazyImport<typeof import("../testing/station.ts")>(
        "../testing/station.ts",
        import.meta.url,
      );
      const { caseLines, reportLines } = await lazyImport<typeof import("../testing/report.ts")>(
        "../testing/report.ts",
        import.meta.url,
      );
      const { junitXml } = await lazyImport<typeof import("../testing/junit.ts")>(
        "../testing/junit.ts",
        import.meta.url,
      );
      const { suiteCassettes } = await lazyImport<typeof import("../testing/case_doubles.ts")>(
        "../testing/case_doubles.ts",
        import.meta.url,
      );
      const { recordingSettings } = await lazyImport<typeof import("../testing/recordings.ts")>(
        "../testing/recordings.ts",
        import.meta.url,
      );
      const json = jsonMode(cmd);
      const config = await commandConfig(cmd);
      // The test station's own info lines (sync, requests) are noise in a test report.
      if (LOG_LEVELS.indexOf(config.values.log.level) < LOG_LEVELS.indexOf("warn")) setLogLevel("warn");
      const environment = opts.env ?? config.values.workflows.environment;
      const parallel = positive("parallel", opts.parallel, navigator.hardwareConcurrency || 2);
      const caseTimeoutMs = positive("case-timeout", opts.caseTimeout, 120) * 1000;
      const coverageMin = opts.coverageMin === undefined ? undefined : Number(opts.coverageMin);
      if (coverageMin !== undefined && !(coverageMin >= 0 && coverageMin <= 100)) {
        throw usageError(
          "invalid_usage",
          `--coverage-min must be a percentage (0–100), got ${opts.coverageMin}`,
        );
      }
      const files = await testFiles(paths, join(config.paths.environments, environment));
      if (files.length === 0) {
        throw usageError(
          "no_test_files",
          `no test files in ${join(config.paths.environments, environment, "tests")}`,
          "write environments/<env>/tests/*.test.yaml (docs/testing.md), or give test files as arguments",
        );
      }
      // Files of the environment are named from its folder (tests/x.test.yaml), others as given.
      const envDir = join(config.paths.environments, environment);
      const suite = await loadTestFiles(files, undefined, paths.length ? Deno.cwd() : envDir);
      const cassettes = await suiteCassettes(suite.cases, (p) => Deno.readTextFile(p));
      const onCase = json ? undefined : (r: TestRun["cases"][number], done: number, total: number) => {
        for (const l of caseLines(r, outStyle)) console.log(l);
        if (Deno.stderr.isTerminal()) note((s) => s.dim(`[${done}/${total}]`));
      };
      const station = globals(cmd).station ?? Deno.env.get("STATION_URL");
      let run: TestRun;
      if (suite.invalid.length) run = newTestRun(environment, suite);
      else if (station) {
        if (opts.update) {
          throw usageError(
            "invalid_usage",
            "--update records on this machine: it cannot be used with --station",
          );
        }
        const client = new StationClient(station, {
          token: Deno.env.get("STATION_API_TOKEN") ?? config.values.server.api_token,
          timeoutMs: caseTimeoutMs * Math.max(1, suite.cases.length),
        });
        run = await client.json("POST", "/api/v1/tests", {
          body: {
            environment,
            files: await bodyFiles(files, cassettes),
            filter: opts.filter,
            parallel,
            bail: opts.bail,
          },
          answer: testsAnswers.TestRun,
        });
        if (!json) { for (const c of run.cases) onCase?.(c, 0, 0); }
      } else {
        if (!json) note((s) => s.dim(`starting a test station for environment ${environment}…`));
        // The runtime's startStation answers the whole Station; the Runtime interface shows the CLI only its address.
        const start = runtimeOf(cmd).startStation as unknown as StartStation;
        const stations = stationPool({ config, environment, cassettes, start }, (test) => ({
          client: test.client,
          ctx: test.station.ctx,
          environment,
          caseTimeoutMs,
          time: test.station.time,
          read: (p: string) => Deno.readTextFile(p),
          update: opts.update ? recordingSettings(config) : undefined,
        }));
        try {
          const targets = {
            main: await stations.get(caseMode({})),
            pick: (c: TestCase) => stations.get(caseMode(c)),
          };
          run = await runSuite(targets, suite, newTestRun(environment, suite), {
            filter: opts.filter,
            parallel,
            bail: opts.bail,
            onCase,
          });
        } finally {
          await stations.stop();
        }
      }
      if (opts.junit) {
        await Deno.mkdir(dirname(opts.junit), { recursive: true }).catch(() => {});
        await writeFileAtomic(opts.junit, junitXml(run));
      }
      const view = { json, text: (r: TestRun, style: Style) => reportLines(r, style, { cases: false }) };
      const code = testExitCode(run, coverageMin);
      if (code === 0) return render(run, view);
      // A failed suite still has its report: on stdout as text, or under --json as the error's details.
      fail(
        run,
        view,
        code === 2
          ? new StationError("invalid_test_file", `${run.invalid.length} test file(s) do not validate`, {
            exitCode: 2,
            hint: "fix each issue at its file:line:col; docs/testing.md lists every field",
          })
          : new StationError(
            "tests_failed",
            run.status === "passed"
              ? `a workflow's coverage is under --coverage-min ${coverageMin}%`
              : `${run.summary.failed} of ${run.summary.total} cases failed`,
            { exitCode: 1 },
          ),
      );
    });
}
