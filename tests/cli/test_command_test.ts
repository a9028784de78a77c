import { XMLParser, XMLValidator } from "fast-xml-parser";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { ROUTE_WORKFLOW, SLOW_WORKFLOW, writeEnvironment } from "../helpers/test_env.ts";

const SUITE = `cases:
  - name: big and approved
    workflow: route
    input: { n: 20 }
    approvals: { check: { decision: approve, comment: fine } }
    expect:
      steps: [pick, big, check, shipped]
      output: 'shipped = true'
  - name: big and rejected
    workflow: route
    input: { n: 20 }
    approvals: { check: { decision: reject } }
    expect:
      steps: { visited: [rejected], not_visited: [shipped] }
  - name: small
    workflow: route
    input: { n: 1 }
    expect:
      output: { size: small }
  - name: wrong on purpose
    workflow: route
    input: { n: 1 }
    expect:
      steps: [pick, big]
`;

Deno.test("stn test: workflow cases pass and fail with a diff, exact coverage, JUnit XML, --json, --filter, --bail, exit codes", async () => {
  const home = await tempHome();
  try {
    await writeEnvironment(home.home, {
      "workflows/route.workflow.yaml": ROUTE_WORKFLOW,
      "tests/route.test.yaml": SUITE,
    });
    const junit = home.path("out", "junit.xml");
    const all = await runStn(["test", "--junit", junit], { env: home.env });
    assertEquals(all.code, 1, all.stdout + all.stderr);
    assertStringIncludes(all.stdout, "✓ tests/route.test.yaml › big and approved");
    assertStringIncludes(all.stdout, "✓ tests/route.test.yaml › small");
    assertStringIncludes(all.stdout, "✗ tests/route.test.yaml › wrong on purpose");
    // The failing path as a diff: the expected state struck, the one taken added.
    assertMatch(all.stdout, /steps: the run took another path\n\s+1 \| pick\n/);
    assertMatch(all.stdout, /\n\s+-\s+2 \| big\n/);
    assertMatch(all.stdout, /\n\s+\+\s+2 \| small\n/);
    assertStringIncludes(all.stdout, "3/4 passed, 1 failed");
    assert(!all.stderr.includes("    at "), "no stack trace");

    const xml = await Deno.readTextFile(junit);
    assertEquals(XMLValidator.validate(xml), true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(xml);
    assertEquals(doc.testsuites["@_tests"], "4");
    assertEquals(doc.testsuites["@_failures"], "1");
    const cases = doc.testsuites.testsuite.testcase as Array<Record<string, unknown>>;
    assertEquals(cases.map((c) => c["@_name"]).sort(), [
      "big and approved",
      "big and rejected",
      "small",
      "wrong on purpose",
    ]);
    const failed = cases.find((c) => c["@_name"] === "wrong on purpose")!;
    assertStringIncludes(
      String((failed.failure as Record<string, unknown>)["@_message"]),
      "steps: the run took another path",
    );

    const json = await runStn(["--json", "test", "--filter", "big"], { env: home.env });
    assertEquals(json.code, 0, json.stderr);
    const run = JSON.parse(json.stdout);
    assertEquals(run.status, "passed");
    assertEquals(run.cases.map((c: { name: string }) => c.name).sort(), [
      "big and approved",
      "big and rejected",
    ]);
    // Coverage names exactly the states visited and the branches taken: the switch only its case 0 here.
    const [route] = run.coverage;
    assertEquals(route.workflow, "route");
    assertEquals(route.visited, ["pick", "big", "check", "shipped", "rejected"]);
    assertEquals(route.taken, ["pick→case 0", "check→approved", "check→onReject"]);
    assertEquals(route.branches, ["pick→case 0", "pick→default", "check→approved", "check→onReject"]);

    // Both ways through the switch: every state and branch; --coverage-min holds at 100.
    const both = await runStn(["--json", "test", "--filter", "r", "--coverage-min", "100"], {
      env: home.env,
    });
    const bothRun = JSON.parse(both.stdout).error.details;
    assertEquals(bothRun.coverage[0].visited, ["pick", "big", "small", "check", "shipped", "rejected"]);
    assertEquals(bothRun.coverage[0].percent, 100);
    assertEquals(both.code, 1, "`wrong on purpose` matches the filter and fails");

    const short = await runStn(["test", "--filter", "big and approved", "--coverage-min", "90"], {
      env: home.env,
    });
    assertEquals(short.code, 1, "under --coverage-min");
    assertStringIncludes(short.stderr, "under --coverage-min 90%");

    const bail = await runStn(["--json", "test", "--bail", "--parallel", "1", "--filter", "wrong"], {
      env: home.env,
    });
    assertEquals(bail.code, 1);
    assertEquals(JSON.parse(bail.stdout).error.details.summary, { total: 1, passed: 0, failed: 1 });
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn test: an invalid test file is reported at file:line:col and exits 2 without starting a station", async () => {
  const home = await tempHome();
  try {
    await writeEnvironment(home.home, {
      "workflows/route.workflow.yaml": ROUTE_WORKFLOW,
      "tests/bad.test.yaml": `cases:
  - name: one
    workflow: route
    expect:
      stauts: completed
  - name: two
    task: no agent or workflow
  - name: three
    workflow: route
    expect:
      output: 'size == "big"'
`,
    });
    const out = await runStn(["test"], { env: home.env });
    assertEquals(out.code, 2, out.stdout + out.stderr);
    assertStringIncludes(out.stdout, "tests/bad.test.yaml:4:5: error unknown_field: unknown field `stauts`");
    assertStringIncludes(
      out.stdout,
      "tests/bad.test.yaml:6:5: error missing_field: a case names an `agent` or a `workflow`",
    );
    // A JSONata mistake is found before anything runs, at its line and column.
    assertStringIncludes(out.stdout, "tests/bad.test.yaml:11:7: error invalid_expression:");
    assert(!out.stderr.includes("starting a test station"), out.stderr);
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn test: a 24 h timer and an approval timing out after 72 h run on skipped time to onTimeout; realtime: true waits", async () => {
  const home = await tempHome();
  try {
    await writeEnvironment(home.home, {
      "workflows/slow.workflow.yaml": SLOW_WORKFLOW,
      "tests/slow.test.yaml": `cases:
  - name: nobody answers
    workflow: slow
    approvals: { ask: { decision: timeout } }
    expect:
      steps: [wait-a-day, ask, late]
      output: 'answer = "timed out"'
  - name: approved after a day
    workflow: slow
    approvals: { ask: { decision: approve } }
    expect: { steps: [wait-a-day, ask, done] }
  - name: in real time
    workflow: slow
    realtime: true
    approvals: { ask: { decision: timeout } }
    expect: { steps: [wait-a-day, ask, late] }
`,
    });
    const out = await runStn(["--json", "test", "--case-timeout", "3"], { env: home.env });
    assertEquals(out.code, 1, out.stderr);
    const run = JSON.parse(out.stdout).error.details;
    const byName = Object.fromEntries(run.cases.map((c: { name: string }) => [c.name, c]));
    assertEquals(byName["nobody answers"].status, "passed", JSON.stringify(byName["nobody answers"]));
    assertEquals(
      byName["approved after a day"].status,
      "passed",
      JSON.stringify(byName["approved after a day"]),
    );
    // The recorded times are virtual: a day of timer, then three days of approval.
    assert(byName["nobody answers"].clock_ms >= 96 * 3_600_000, String(byName["nobody answers"].clock_ms));
    assert(byName["approved after a day"].clock_ms >= 24 * 3_600_000);
    assert(byName["approved after a day"].clock_ms < 25 * 3_600_000);
    // On the wall clock the day does not pass: the case runs out of its time.
    assertEquals(byName["in real time"].status, "failed");
    assertStringIncludes(byName["in real time"].failures[0].message, "did not finish within 3 s");
    assertEquals(run.coverage[0].taken, ["ask→approved", "ask→onTimeout"]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn test --station URL: the files go to that station's POST /api/v1/tests and the report is the same", async () => {
  const home = await tempHome();
  const serve = await (async () => {
    await writeEnvironment(home.home, { "workflows/route.workflow.yaml": ROUTE_WORKFLOW });
    return await startServe({ env: home.env, home: home.home });
  })();
  try {
    // The test file lives outside the station's environment: it travels in the request.
    const file = home.path("local.test.yaml");
    await Deno.writeTextFile(file, SUITE);
    const out = await runStn(["test", "--station", serve.url, "--junit", home.path("j.xml"), file], {
      env: home.env,
    });
    assertEquals(out.code, 1, out.stdout + out.stderr);
    assertStringIncludes(out.stdout, "✓ ");
    assertStringIncludes(out.stdout, "› small");
    assertStringIncludes(out.stdout, "3/4 passed, 1 failed");
    assertEquals(XMLValidator.validate(await Deno.readTextFile(home.path("j.xml"))), true);
    const listed = await (await fetch(`${serve.url}/api/v1/tests`)).json();
    assertEquals(listed.runs.length, 1);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});

Deno.test("stn test: sandbox: mock runs sandbox steps without Docker, their commands answering exit 0", async () => {
  const home = await tempHome();
  try {
    await writeEnvironment(home.home, {
      "workflows/build.workflow.yaml": `id: build
states:
  - id: compile
    type: sandbox
    command: [make, all]
    next: report
  - id: report
    type: transform
    expression: '{"exit": compile.exit_code}'
    end: true
`,
      "tests/build.test.yaml": `cases:
  - name: builds
    workflow: build
    sandbox: mock
    expect:
      steps: [compile, report]
      output: 'exit = 0'
`,
    });
    const out = await runStn(["test"], {
      env: { ...home.env, STN_SANDBOX_DOCKER_HOST: "unix:///nonexistent.sock" },
    });
    assertEquals(out.code, 0, out.stdout + out.stderr);
    assertStringIncludes(out.stdout, "✓ tests/build.test.yaml › builds");
  } finally {
    await home.cleanup();
  }
});
