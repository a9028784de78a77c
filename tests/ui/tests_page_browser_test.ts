import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";
import { ROUTE_WORKFLOW, writeEnvironment } from "../helpers/test_env.ts";

// The dashboard's Tests page in a real Chromium against a real station that ran a suite through the API: the
// list of test runs, a run's page with each case, a failing one's assertion and diff, and the coverage.

const SUITE = `cases:
  - name: small
    workflow: route
    input: { n: 1 }
    expect: { output: { size: small } }
  - name: off on purpose
    workflow: route
    input: { n: 1 }
    expect: { steps: [pick, big] }
`;

Deno.test("dashboard in Chromium: the Tests page lists test runs and shows a run's cases, failures and coverage", async () => {
  const home = await tempHome();
  await writeEnvironment(home.home, {
    "workflows/route.workflow.yaml": ROUTE_WORKFLOW,
    "tests/route.test.yaml": SUITE,
  });
  const ts = await startTestStation({ home });
  const b = await startBrowser("tests-page");
  try {
    const url = ts.station.url;
    const res = await fetch(`${url}/api/v1/tests`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assertEquals(res.status, 201);
    const run = await res.json();
    const { page, errors } = await b.page();
    await page.goto(`${url}/ui/runs`);
    await page.getByRole("link", { name: "Tests" }).click();
    await page.waitForURL("**/ui/tests");
    await page.getByRole("link", { name: run.id }).click();
    await page.waitForURL(`**/ui/tests/${run.id}`);
    const failed = page.locator("tbody tr", { hasText: "off on purpose" });
    assertMatch(await failed.locator(".status-failed").textContent() ?? "", /failed/);
    assertMatch(await failed.locator("pre").textContent() ?? "", /-\s+2 \| big/);
    assertMatch(await page.locator("tbody tr", { hasText: "› small" }).textContent() ?? "", /passed/);
    const coverage = page.locator("table", { hasText: "Workflow coverage" });
    // Two of five states and one of five branches: the states not visited and branches not taken named.
    assertMatch(
      await coverage.textContent() ?? "",
      /route\s*30%\s*big, check, shipped, rejected\s*pick→case 0/,
    );
    // A run that does not exist is the dashboard's 404 page.
    const missing = await page.goto(`${url}/ui/tests/nope`);
    assertEquals(missing?.status(), 404);
    assertEquals(errors.filter((e) => !e.includes("404")), []);
  } finally {
    await b.close();
    await ts.close();
    await home.cleanup();
  }
});
