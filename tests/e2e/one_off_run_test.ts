import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

/** A workflow whose schedule would fire every minute, were it stored. */
const CRON_WORKFLOW = `id: every-minute
schedule: { cron: "* * * * *" }
states:
  - id: say
    type: inject
    data: { said: hi }
    end: true
`;

/** The rows of the ledger's schedule table (read beside a running server: SQLite's WAL allows it). */
function scheduleRows(home: TempHome): unknown[] {
  const db = new DatabaseSync(home.path("stn.db"), { readOnly: true });
  try {
    return db.prepare("SELECT workflow_id FROM schedules").all();
  } finally {
    db.close();
  }
}

/** Runs the file twice and checks it left no stored workflow and no schedule; answers the last run's id. */
async function runTwice(home: TempHome, file: string, env: Record<string, string>): Promise<string> {
  let runId = "";
  for (let i = 0; i < 2; i++) {
    const r = await runStn(["--json", "workflow", "run", file, "--wait"], { env });
    assertEquals(r.code, 0, r.stderr);
    const run = JSON.parse(r.stdout);
    assertEquals([run.status, run.workflow_version, run.result], ["completed", null, { said: "hi" }]);
    assertEquals(run.run_id, run.id, "run_id names the run (id is its deprecated alias)");
    runId = run.run_id;
  }
  const list = await runStn(["--json", "workflow", "list"], { env });
  assertEquals(JSON.parse(list.stdout).workflows, [], "a file run stores no workflow");
  assertEquals(scheduleRows(home), [], "a file run switches on no schedule");
  const inspect = await runStn(["workflow", "inspect", runId], { env });
  assertStringIncludes(inspect.stdout, "one-off");
  const shown = await runStn(["--json", "workflow", "inspect", runId, "--definition"], { env });
  assertEquals(JSON.parse(shown.stdout).schedule.cron, "* * * * *", "the run keeps the exact definition");
  return runId;
}

Deno.test("stn workflow run FILE runs once: no stored workflow, no schedule (embedded and against stn serve)", async (t) => {
  const home = await tempHome();
  const file = home.path("every-minute.workflow.yaml");
  Deno.writeTextFileSync(file, CRON_WORKFLOW);
  try {
    await t.step("embedded", () => runTwice(home, file, home.env).then(() => {}));

    await t.step("against stn serve; --save stores it, schedule and all", async () => {
      const serve = await startServe({ home: home.home, env: home.env });
      try {
        await runTwice(home, file, home.env);
        const saved = await runStn(["--json", "workflow", "run", file, "--save", "--wait"], {
          env: home.env,
        });
        assertEquals(saved.code, 0, saved.stderr);
        assertEquals(JSON.parse(saved.stdout).workflow_version, 1);
        const list = JSON.parse((await runStn(["--json", "workflow", "list"], { env: home.env })).stdout);
        assertEquals(list.workflows.map((w: { id: string; status: string }) => [w.id, w.status]), [
          ["every-minute", "active"],
        ]);
        // The scheduler reconciles its table with the store every couple of seconds.
        assert(
          await waitFor(() => scheduleRows(home).length === 1, 10_000),
          "the stored workflow's schedule is on",
        );
        const byId = await runStn(["workflow", "run", "every-minute", "--save"], { env: home.env });
        assertEquals(byId.code, 2, "--save with a stored workflow's id is a usage error");
      } finally {
        await serve.stop();
      }
    });
  } finally {
    await home.cleanup();
  }
});
