import { AgentScheduler } from "../../src/agents/scheduler.ts";
import { putAgent } from "../../src/agents/store.ts";
import { agentDef, agentHarness, PLAIN_PROMPT } from "../helpers/agents.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { waitFor } from "../helpers/stn.ts";

const HOUR = 3_600_000;

Deno.test("agent scheduler: a fire missed while the station was down runs once at start; two processes fire once", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "report sent" }));
  const hourly = agentDef("Hourly", PLAIN_PROMPT, {
    schedule: { cron: "0 * * * *", enabled: true, task: "send the report", variables: {} },
  });
  const h = await agentHarness(model.url, [hourly]);
  const runs = () => h.service.ledger.list({ agent: "Hourly", limit: 50 });
  try {
    putAgent(h.db, hourly, new Date().toISOString());
    let now = Date.parse("2026-01-01T10:30:00Z");
    const clock = { now: () => now };
    // The station is up at 10:30 and learns the schedule (next fire 11:00), then goes down.
    new AgentScheduler(h.service, h.db, clock).reconcile();

    // It comes back at 13:10: 11:00, 12:00 and 13:00 were missed; like workflow schedules, one run catches
    // up — even with two stn processes on the same ledger ticking at once.
    now = Date.parse("2026-01-01T13:10:00Z");
    const a = new AgentScheduler(h.service, h.db, clock);
    const b = new AgentScheduler(h.service, h.db, clock);
    a.start(20);
    b.start(20);
    assert(await waitFor(() => runs().runs.length > 0, 5000), "the missed fire ran");
    await waitFor(() => runs().runs.every((r) => r.status !== "running"), 5000);
    await new Promise((r) => setTimeout(r, 200));
    assertEquals(runs().runs.map((r) => [r.trigger, r.task, r.status]), [[
      "schedule",
      "send the report",
      "completed",
    ]]);

    // The next fire is the next hour after the restart, not one per missed hour.
    now += HOUR;
    assert(await waitFor(() => runs().runs.length === 2, 5000), "14:00 fired");
    await new Promise((r) => setTimeout(r, 200));
    assertEquals(runs().runs.length, 2);
    a.stop();
    b.stop();
  } finally {
    await h.close();
    await model.close();
  }
});
