import { WorkflowDefinition } from "../../src/workflows/definition/schema.ts";
import type { RunView } from "../../src/workflows/engine/views.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { waitRun } from "./helpers.ts";

const ECHO_TRIGGER = { id: "who", type: "transform", expression: "workflow.trigger" };

Deno.test("workflow.trigger: a scheduled run carries its schedule; API runs say manual or api", async () => {
  const { station, client, close } = await startTestStation();
  const { engine, workflows } = station.ctx;
  try {
    workflows.save(
      WorkflowDefinition.parse({
        id: "tick",
        schedule: { cron: "* * * * * *", timezone: "Europe/Berlin" },
        states: [ECHO_TRIGGER],
      }),
      { source: "api" },
    );
    let runId: string | undefined;
    assert(
      await waitFor(() => {
        runId = engine.reads.runs.list({ workflowId: "tick", limit: 1 }).runs[0]?.id;
        return runId !== undefined;
      }, 8000),
      "the schedule fires",
    );
    workflows.disable("tick");
    const done = await waitRun(engine, runId!);
    const trigger = JSON.parse(done.result!);
    assertEquals(trigger.type, "cron");
    assertEquals(trigger.expression, "* * * * * *");
    assertEquals(trigger.timezone, "Europe/Berlin");
    assert(!Number.isNaN(Date.parse(trigger.scheduled_at)), trigger.scheduled_at);

    const definition = { id: "adhoc", states: [ECHO_TRIGGER] };
    for (
      const [body, type] of [[{ definition }, "api"], [{ definition, trigger: "manual" }, "manual"]] as const
    ) {
      const run = await client.json<RunView>("POST", "/api/v1/workflow-runs", { body });
      assertEquals(JSON.parse((await waitRun(engine, run.id)).result!), { type });
    }
  } finally {
    await close();
  }
});
