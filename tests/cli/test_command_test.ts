import { XMLParser, XMLValidator } from "fast-xml-parser";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";
import { ROUTE_WORKFLOW, writeEnvironment } from "../helpers/test_env.ts";

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
    assertMatch(all.stdout, /steps: the run took another path\n\s+pick\n\s+- big\n\s+\+ small/);
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
    const bothRun = JSON.parse(both.stdout);
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
    assertEquals(JSON.parse(bail.stdout).summary, { total: 1, passed: 0, failed: 1 });
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
`,
    });
    const out = await runStn(["test"], { env: home.env });
    assertEquals(out.code, 2, out.stdout + out.stderr);
    assertStringIncludes(out.stdout, "tests/bad.test.yaml:4:5: error unknown_field: unknown field `stauts`");
    assertStringIncludes(
      out.stdout,
      "tests/bad.test.yaml:6:5: error missing_field: a case names an `agent` or a `workflow`",
    );
    assert(!out.stderr.includes("starting a test station"), out.stderr);
  } finally {
    await home.cleanup();
  }
});
