import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { loadWorkflowFile } from "../../../src/workflows/definition/load.ts";
import type { WorkflowDefinition } from "../../../src/workflows/definition/schema.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import { runStn } from "../../helpers/stn.ts";
import { attempts, waitRun } from "../helpers.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/station/", import.meta.url));

/** What each converted Station file must do when it runs: input → status, steps taken, result. */
const CASES: Array<{
  file: string;
  input: Record<string, unknown>;
  status: "completed" | "failed" | "waiting";
  steps: string[];
  result?: unknown;
  error?: string;
}> = [
  {
    file: "switch-routing.workflow.yaml",
    input: { alert: { severity: "critical", service: "api" } },
    status: "completed",
    steps: ["route", "page"],
    result: { summary: "paging for api" },
  },
  {
    // The high route ends at an agent step whose agent this home lacks: the route is what is checked.
    file: "switch-routing.workflow.yaml",
    input: { alert: { severity: "high", service: "api" } },
    status: "failed",
    steps: ["route", "escalate", "analyze_high"],
    error: "agent_not_found",
  },
  {
    file: "switch-routing.workflow.yaml",
    input: { alert: { severity: "low", service: "api" } },
    status: "completed",
    steps: ["route", "log_only"],
    result: { summary: "logged" },
  },
  {
    file: "foreach-services.workflow.yaml",
    input: {},
    status: "completed",
    steps: ["init", "check_all", "check_all/0/check", "check_all/1/check", "check_all/2/check", "summarize"],
    result: { slow: ["api", "db"], count: 3, all_ok: false },
  },
  {
    file: "cron-start.workflow.yaml",
    input: { region: "us-east", hosts: ["a", "b", "c"] },
    status: "completed",
    steps: ["report"],
    result: { region: "us-east", hosts: 3, label: "report-3" },
  },
  {
    file: "transforms.workflow.yaml",
    input: {
      orders: [{ id: "o1", amount: 300 }, { id: "o2", amount: 50 }, { id: "o3", amount: 200 }],
      owner: "kim",
    },
    status: "completed",
    steps: ["totals", "check", "large"],
    result: { size: "large", first_big: "o1", flag: true },
  },
  {
    file: "transforms.workflow.yaml",
    input: { orders: [{ id: "o1", amount: 10 }] },
    status: "completed",
    steps: ["totals", "check", "small"],
    result: { size: "small" },
  },
  {
    file: "parallel-diagnostics.workflow.yaml",
    input: {},
    status: "completed",
    steps: [
      "diagnose",
      "diagnose/db/db_probe",
      "diagnose/db/db_check",
      "diagnose/cache/cache_probe",
      "verdict",
      "degraded",
    ],
    result: { verdict: "degraded", slowest: 250 },
  },
  {
    file: "approval-body.workflow.json",
    input: {},
    status: "waiting",
    steps: ["prepare", "approve"],
  },
];

Deno.test("stn workflow migrate: a Station corpus converts to files that validate and run as Station meant", async () => {
  const home = await tempHome();
  const out = home.path("converted");
  const t = await startTestStation();
  const { engine } = t.station.ctx;
  try {
    const r = await runStn(["workflow", "migrate", join(FIXTURES, "ok"), "-o", out], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stderr, "6 file(s): 6 changed");
    assert(!r.stderr.includes("error"), r.stderr);
    // Comments survive the conversion.
    assertStringIncludes(
      Deno.readTextFileSync(join(out, "switch-routing.workflow.yaml")),
      "# legacy bare path; the input's fields are at the top level",
    );
    // Migrating the output again finds nothing to do.
    const again = await runStn(["workflow", "migrate", out, "--check"], { env: home.env });
    assertEquals(again.code, 0, again.stderr);
    assertStringIncludes(again.stderr, "0 would change");

    const definitions = new Map<string, WorkflowDefinition>();
    for (const name of Deno.readDirSync(out)) {
      const loaded = await loadWorkflowFile(join(out, name.name));
      assert(loaded.valid, `${name.name}: ${JSON.stringify(loaded.errors)}`);
      definitions.set(name.name, loaded.definition!);
    }
    assertEquals(definitions.get("cron-start.workflow.yaml")!.schedule, {
      cron: "0 6 * * *",
      timezone: "America/New_York",
      input: { region: "us-east", hosts: ["a", "b", "c"] },
      enabled: true,
    });

    // Station's field names load as stn's.
    const later = definitions.get("switch-routing.workflow.yaml")!.states.find((s) =>
      s.id === "analyze_later"
    )!;
    assertEquals(later.type === "agent" && [later.agent, later.task, later.retry?.initial_interval], [
      "incident-analyst",
      "Summarize ${decision.summary}",
      "5s",
    ]);
    const approve = definitions.get("approval-body.workflow.json")!.states.find((s) => s.id === "approve")!;
    assertEquals(approve.type === "human_approval" && [approve.name, approve.timeout], [
      "Production deploy",
      "600s",
    ]);

    for (const c of CASES) {
      const label = `${c.file} ${JSON.stringify(c.input)}`;
      const run = await engine.startRun({ definition: definitions.get(c.file)!, input: c.input });
      const done = await waitRun(engine, run.id, [
        c.status,
        ...(c.status === "waiting" ? [] : ["completed", "failed"] as const),
      ]);
      assertEquals(done.status, c.status, `${label}: ${done.error}`);
      const steps = attempts(engine, run.id).map((a) => a.path);
      assertEquals(steps.toSorted(), c.steps.toSorted(), label);
      if (c.result !== undefined) assertEquals(JSON.parse(done.result!), c.result, label);
      if (c.error) assertEquals(JSON.parse(done.error!).code, c.error, label);
      if (c.file === "approval-body.workflow.json") {
        const [approval] = engine.reads.approvals.list({ runId: run.id });
        assertEquals(approval.message, 'Deploy 1.4.2?\n\n{"version":"1.4.2","risk":0.3}');
        assertEquals(JSON.parse(approval.approvers), ["ops"]);
        await engine.decide(approval.id, true, "erin");
        const approved = await waitRun(engine, run.id);
        assertEquals(JSON.parse(approved.result!), { deployed: "1.4.2", risky: false });
      }
    }
  } finally {
    await t.close();
    await home.cleanup();
  }
});

Deno.test("stn workflow migrate: what cannot be converted is reported with its line, and marked, not guessed", async () => {
  const home = await tempHome();
  const file = join(FIXTURES, "unconvertible", "hard.workflow.yaml");
  try {
    const check = await runStn(["workflow", "migrate", file, "--check"], { env: home.env });
    assertEquals(check.code, 1);
    assertEquals(check.stdout, "", "--check prints no converted text");
    const errors = check.stderr.split("\n").filter((l) => l.includes(": error: "));
    assertEquals(errors.map((l) => l.split(": error: ")[0].replace(file, "")), [
      ":5:17",
      ":9:17",
      ":12:11",
      ":17:14",
      ":20:11",
    ]);
    assertStringIncludes(errors[0], "keyword arguments");
    assertStringIncludes(errors[1], "`%` string formatting");
    assertStringIncludes(errors[2], "`type: try`");
    assertStringIncludes(errors[3], "template filter");
    assertStringIncludes(errors[4], "no loop state");

    const target = home.path("hard.workflow.yaml");
    const written = await runStn(["workflow", "migrate", file, "-o", target], { env: home.env });
    assertEquals(written.code, 1);
    const text = Deno.readTextFileSync(target);
    assertStringIncludes(text, "sorted(items, key=lambda i: i['n'])"); // left as written
    assertStringIncludes(text, "# stn migrate: not converted");
    assert(!(await loadWorkflowFile(target)).valid, "a marked file does not pass for a valid one");
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn workflow migrate: a single API-body file goes to stdout as JSON; a directory without -o is a usage error", async () => {
  const home = await tempHome();
  try {
    const body = home.path("01-incident.json");
    Deno.writeTextFileSync(
      body,
      JSON.stringify({
        workflowId: "incident",
        definition: {
          states: [{ id: "s", type: "switch", conditions: [{ if: "severity == 'high'", next: "s2" }] }, {
            id: "s2",
            type: "set",
            data: { x: 1 },
          }],
        },
      }),
    );
    const r = await runStn(["workflow", "migrate", body], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    const def = JSON.parse(r.stdout);
    assertEquals(def.id, "incident");
    assertEquals(def.states[0].conditions[0].if, "severity = 'high'");
    assertEquals(def.states[1].resultPath, "ctx");

    const dir = await runStn(["workflow", "migrate", FIXTURES + "ok"], { env: home.env });
    assertEquals(dir.code, 2);
    assertStringIncludes(dir.stderr, "error:");
    assertStringIncludes(dir.stderr, "hint:");
    // A missing file is exit 1 like every other unreadable local file (docs/cli.md), not a usage error.
    const missing = await runStn(["workflow", "migrate", home.path("nope.yaml")], { env: home.env });
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, "no such file");
  } finally {
    await home.cleanup();
  }
});
