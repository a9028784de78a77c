import { DatabaseSync } from "node:sqlite";
import type { Station } from "../../../src/runtime/station.ts";
import { sendEvent } from "../../../src/workflows/events.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { def } from "../helpers.ts";

/** A workflow started by `push` events, debounced per repo. */
const rebuild = (period: string) =>
  def({
    id: "rebuild",
    debounce: { key: "${input.repo}", period },
    triggers: [{ event: "push" }],
    states: [{ id: "build", type: "transform", expression: "{'repo': repo, 'n': n}" }],
  });

/** Sends a push event the way the API does (the workflow's trigger maps it to a start). */
async function push(station: Station, data: { repo: string; n: number }) {
  return (await sendEvent(station.ctx, { name: "push", data, source: "api" })).event;
}

const runsOf = (station: Station) =>
  station.ctx.engine.reads.runs.list({ workflowId: "rebuild", limit: 100 }).runs.reverse();

const started = (station: Station, eventId: string) =>
  JSON.parse(station.ctx.engine.reads.eventLog.get(eventId)!.started) as Record<string, string>[];

Deno.test("debounce: a burst of events starts one run per key, with the last event's input", async () => {
  const { station, close } = await startTestStation({ time: "virtual" });
  try {
    station.ctx.workflows.save(rebuild("10m"), { source: "api" });
    const events = [];
    for (let n = 1; n <= 5; n++) events.push(await push(station, { repo: "api", n }));
    const web = await push(station, { repo: "web", n: 1 });
    assertEquals(runsOf(station), [], "nothing starts inside the window");
    // Each superseded event says which event took its place; the last says when its run starts.
    for (let i = 0; i < 4; i++) {
      assertEquals(started(station, events[i].id), [{
        workflow_id: "rebuild",
        superseded_by: events[i + 1].id,
      }]);
    }
    const [pending] = started(station, events[4].id);
    assertEquals(Date.parse(pending.debounced_until) - Date.parse(events[4].received_at), 10 * 60_000);

    await station.time!.during(
      waitFor(() => runsOf(station).filter((r) => r.status === "completed").length === 2, 15_000),
    );
    const runs = runsOf(station);
    assertEquals(runs.map((r) => JSON.parse(r.input)).sort((a, b) => a.repo.localeCompare(b.repo)), [
      { repo: "api", n: 5 },
      { repo: "web", n: 1 },
    ]);
    const api = runs.find((r) => JSON.parse(r.input).repo === "api")!;
    assertEquals(started(station, events[4].id), [{ workflow_id: "rebuild", run_id: api.id }]);
    assert(started(station, web.id)[0].run_id !== undefined, "the other key's event names its run");
    const context = JSON.parse(station.ctx.engine.reads.scopes.get(api.id, "")!.context);
    assertEquals(context.workflow.trigger, { type: "event", event: "push", event_id: events[4].id });
    // The run started when the last event's window ended, not earlier.
    assert(Date.parse(api.created_at) >= Date.parse(pending.debounced_until), api.created_at);

    // A direct start is not debounced: it runs at once.
    const direct = await station.ctx.engine.startRun({
      definition: rebuild("10m"),
      input: { repo: "api", n: 9 },
    });
    assert(direct.status !== "waiting_for_concurrency");
    assertEquals(runsOf(station).length, 3);
  } finally {
    await close();
  }
});

Deno.test("debounce across a restart: the pending start survives it and starts exactly once", async () => {
  const home = await tempHome();
  try {
    let { station, close } = await startTestStation({ home });
    station.ctx.workflows.save(rebuild("4s"), { source: "api" });
    for (let n = 1; n <= 3; n++) await push(station, { repo: "api", n });
    await close();
    // Stopped inside the window: the ledger holds the one pending start and no run.
    const db = new DatabaseSync(home.path("stn.db"), { readOnly: true });
    try {
      const pending = db.prepare("SELECT json_extract(input, '$.n') AS n FROM debounced_starts").all();
      assertEquals(pending.map((r) => r.n), [3]);
      assertEquals(db.prepare("SELECT COUNT(*) AS n FROM workflow_runs").get()!.n, 0);
    } finally {
      db.close();
    }
    ({ station, close } = await startTestStation({ home }));
    try {
      assert(await waitFor(() => runsOf(station).some((r) => r.status === "completed"), 15_000));
      const runs = runsOf(station);
      assertEquals(runs.map((r) => JSON.parse(r.input)), [{ repo: "api", n: 3 }]);
      // Nothing is left to start: the start was taken with its run.
      assertEquals(station.ctx.engine.nextDue(), null);
    } finally {
      await close();
    }
  } finally {
    await home.cleanup();
  }
});
