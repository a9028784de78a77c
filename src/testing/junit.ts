/** A test run as JUnit XML (one testsuite per test file), the form GitHub Actions, GitLab and Jenkins render. */

import type { TestRun } from "../contract/tests.ts";

/** Text escaped for an XML attribute or element (and stripped of characters XML 1.0 cannot hold). */
export function xmlEscape(s: string): string {
  return s
    // deno-lint-ignore no-control-regex
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F]/g, "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&apos;");
}

const secs = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

/** The run as a JUnit XML document; invalid test files are suites with one errored case each. */
export function junitXml(run: TestRun): string {
  const files = new Map<string, TestRun["cases"]>();
  for (const c of run.cases) files.set(c.file, [...(files.get(c.file) ?? []), c]);
  const suites: string[] = [];
  for (const [file, cases] of files) {
    const failed = cases.filter((c) => c.status === "failed").length;
    const time = cases.reduce((n, c) => n + c.duration_ms, 0);
    suites.push(
      `  <testsuite name="${xmlEscape(file)}" tests="${cases.length}" failures="${failed}" errors="0" time="${
        secs(time)
      }">`,
    );
    for (const c of cases) {
      const head = `    <testcase name="${xmlEscape(c.name)}" classname="${xmlEscape(file)}" time="${
        secs(c.duration_ms)
      }"`;
      if (c.status === "passed") {
        suites.push(`${head}/>`);
        continue;
      }
      const message = c.failures.map((f) => `${f.assertion}: ${f.message}`).join("; ");
      const body = c.failures.map((f) => `${f.assertion}: ${f.message}${f.diff ? `\n${f.diff}` : ""}`).join(
        "\n\n",
      );
      suites.push(`${head}>`);
      suites.push(
        `      <failure message="${xmlEscape(message)}" type="assertion">${xmlEscape(body)}</failure>`,
      );
      suites.push(`    </testcase>`);
    }
    suites.push(`  </testsuite>`);
  }
  for (const inv of run.invalid) {
    const text = inv.errors.map((e) => `${inv.file}:${e.line ?? 1}:${e.column ?? 1}: ${e.code}: ${e.message}`)
      .join("\n");
    suites.push(`  <testsuite name="${xmlEscape(inv.file)}" tests="1" failures="0" errors="1" time="0">`);
    suites.push(`    <testcase name="test file is valid" classname="${xmlEscape(inv.file)}" time="0">`);
    suites.push(`      <error message="invalid test file" type="invalid">${xmlEscape(text)}</error>`);
    suites.push(`    </testcase>`);
    suites.push(`  </testsuite>`);
  }
  const failed = run.summary.failed;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="stn test" tests="${run.summary.total}" failures="${failed}" errors="${run.invalid.length}" time="${
      secs(run.duration_ms)
    }">`,
    ...suites,
    `</testsuites>`,
    "",
  ].join("\n");
}
