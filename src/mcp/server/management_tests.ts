/** The management server's test tools: run_tests and get_test_run (each one API call). */

import type { StationClient } from "../../client/http.ts";
import { StartTestRunBody, TestRunIdParam } from "../../contract/tests.ts";
import { TestRun } from "../../client/answers/tests.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

/** The test tools of the management server. */
export function testTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "run_tests",
      "Run an environment's test cases (tests/*.test.yaml, or the files given) against this station: each case's " +
        "pass/fail with its failing assertions, and workflow coverage (docs/testing.md).",
      StartTestRunBody,
      (body, signal) => client.json("POST", "/api/v1/tests", { body, answer: TestRun, signal }),
    ),
    zodTool(
      "get_test_run",
      "A test run by id (run_tests with wait: false answers at once): its cases, failures and coverage.",
      TestRunIdParam,
      (a, signal) =>
        client.json("GET", `/api/v1/tests/${encodeURIComponent(a.id)}`, { answer: TestRun, signal }),
    ),
  ];
}
