/** The station's test runs (POST /api/v1/tests): kept in memory, the last RETAINED of them, newest first. */

import { resolve } from "node:path";
import type { z } from "zod";
import { StationClient } from "../client/http.ts";
import type { StartTestRunBody, TestRun } from "../contract/tests.ts";
import type { StationContext } from "../context.ts";
import { StationError } from "../errors.ts";
import { environmentTestFiles, loadTestFiles, type ReadText, TEST_FILE } from "./load.ts";
import { newTestRun, runSuite } from "./suite.ts";

/** How many test runs a station keeps (the dashboard shows them; a restart forgets them). */
export const RETAINED = 50;

/** The last test runs of a station, by id. */
export class TestRuns {
  #runs: TestRun[] = [];

  /** Keeps a run (the same object the runner fills in), dropping the oldest past RETAINED. */
  add(run: TestRun): void {
    this.#runs.unshift(run);
    this.#runs.length = Math.min(this.#runs.length, RETAINED);
  }

  /** The runs, newest first. */
  list(): TestRun[] {
    return [...this.#runs];
  }

  get(id: string): TestRun | undefined {
    return this.#runs.find((r) => r.id === id);
  }

  /** Starts the suite a POST /api/v1/tests asks for; `api` is the app itself, which the cases call in-process. */
  async start(
    ctx: StationContext,
    body: z.output<typeof StartTestRunBody>,
    api: (req: Request) => Response | Promise<Response>,
  ): Promise<{ run: TestRun; done: Promise<TestRun> }> {
    const environment = body.environment ?? ctx.config.values.workflows.environment;
    const { paths, read, base } = await sources(ctx, environment, body.files);
    if (paths.length === 0) {
      throw new StationError("no_test_files", `no test files for environment ${environment}`, {
        status: 400,
        hint: "send `files`, or write environments/<env>/tests/*.test.yaml on the station (docs/testing.md)",
      });
    }
    const suite = await loadTestFiles(paths, read, base);
    if (suite.invalid.length) {
      throw new StationError("invalid_test_file", `${suite.invalid.length} test file(s) do not validate`, {
        status: 400,
        hint: "fix each issue at its file:line:col (details); `stn test` shows them too",
        details: suite.invalid,
      });
    }
    const client = new StationClient("http://stn.internal", {
      token: ctx.config.values.server.api_token,
      timeoutMs: 10 * 60_000,
      fetch: async (input, init) => await api(new Request(input, init)),
    });
    const run = newTestRun(environment, suite);
    this.add(run);
    // A running station keeps the wall clock: every case runs in real time here (docs/testing.md).
    const target = { client, ctx, environment, caseTimeoutMs: 120_000, read };
    const done = runSuite({ main: target }, suite, run, {
      filter: body.filter,
      parallel: body.parallel ?? 2,
      bail: body.bail,
    });
    return { run, done };
  }
}

/** Where the body's files live: a folder that is nowhere on disk, so paths resolve but never read the disk. */
const BODY_ROOT = "/stn-test-body";

/** The test files to load and how to read them (and the cassettes they name): the body's, or the environment's. */
async function sources(
  ctx: StationContext,
  environment: string,
  files?: Array<{ path: string; text: string }>,
) {
  if (files) {
    const byPath = new Map(files.map((f) => [resolve(BODY_ROOT, f.path), f.text]));
    const read: ReadText = (p) => {
      const text = byPath.get(resolve(BODY_ROOT, p));
      if (text === undefined) {
        return Promise.reject(new StationError("file_not_found", `${p} is not among the files sent`));
      }
      return Promise.resolve(text);
    };
    const tests = files.map((f) => f.path).filter((p) => TEST_FILE.test(p));
    return { paths: tests, read, base: BODY_ROOT };
  }
  const dir = resolve(ctx.config.paths.environments, environment);
  const read: ReadText = (p) => Deno.readTextFile(p);
  return { paths: await environmentTestFiles(dir), read, base: dir };
}
