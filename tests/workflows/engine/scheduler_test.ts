import { WorkflowDefinition } from "../../../src/workflows/definition/schema.ts";
import { nextFire } from "../../../src/lib/cron.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";

Deno.test("nextFire honours the schedule's time zone", () => {
  const from = new Date("2026-01-01T00:30:00Z");
  assertEquals(
    new Date(nextFire("0 9 * * *", "Asia/Tokyo", from)!).toISOString(),
    "2026-01-02T00:00:00.000Z",
  );
  assertEquals(
    new Date(nextFire("0 9 * * *", "America/New_York", from)!).toISOString(),
    "2026-01-01T14:00:00.000Z",
  );
  assertEquals(new Date(nextFire("0 9 * * *", "UTC", from)!).toISOString(), "2026-01-01T09:00:00.000Z");
});

Deno.test("schedules: the latest enabled version fires on its cron; disabling stops it", async () => {
  const { station, close } = await startTestStation();
  const { db, workflows } = station.ctx;
  const runsOf = (version: number) =>
    (db.prepare("SELECT COUNT(*) AS n FROM workflow_runs WHERE workflow_id = 'tick' AND workflow_version = ?")
      .get(version) as { n: number }).n;
  const def = (label: string) =>
    WorkflowDefinition.parse({
      id: "tick",
      schedule: { cron: "* * * * * *", timezone: "Europe/Berlin", input: { label } },
      states: [{ id: "say", type: "inject", data: { label: "${label}" } }],
    });
  try {
    workflows.save(def("one"), { source: "api" });
    assert(await waitFor(() => runsOf(1) >= 2, 8000), "version 1 fires every second");
    const run = db.prepare(
      "SELECT input, status FROM workflow_runs WHERE workflow_id = 'tick' ORDER BY id LIMIT 1",
    )
      .get() as { input: string; status: string };
    assertEquals(JSON.parse(run.input), { label: "one" });

    workflows.save(def("two"), { source: "api" });
    assert(await waitFor(() => runsOf(2) >= 2, 8000), "version 2 takes over");
    const v1 = runsOf(1);
    await new Promise((r) => setTimeout(r, 1500));
    assertEquals(runsOf(1), v1, "the old version no longer fires");

    workflows.disable("tick");
    await new Promise((r) => setTimeout(r, 3000)); // reconcile runs every 2 s
    const stopped = runsOf(2);
    await new Promise((r) => setTimeout(r, 1500));
    assertEquals(runsOf(2), stopped, "a disabled workflow does not fire");
  } finally {
    await close();
  }
});
