import { StationError } from "../../src/errors.ts";
import { startWorkflowRun } from "../../src/workflows/service.ts";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { def, waitRun } from "./helpers.ts";

const hello = { id: "hello", states: [{ id: "say", type: "inject", data: { text: "hi ${name}" } }] };

Deno.test("workflow service: validate, store and start a run; what cannot run says why", async (t) => {
  const { station, close } = await startTestStation();
  const ctx = station.ctx;
  const fails = async (req: Parameters<typeof startWorkflowRun>[1]) =>
    (await assertRejects(() => startWorkflowRun(ctx, req), StationError)) as StationError;
  try {
    await t.step(
      "an inline definition is validated and run once: the run keeps it, the store does not",
      async () => {
        const run = await startWorkflowRun(ctx, { definition: def(hello), input: { name: "ann" } });
        assertEquals([run.workflow_id, run.workflow_version], ["hello", null]);
        assertEquals(ctx.workflows.has("hello"), false);
        assertEquals(JSON.parse(run.definition).id, "hello");
        const done = await waitRun(ctx.engine, run.id);
        assertEquals(JSON.parse(done.result!), { text: "hi ann" });
      },
    );
    await t.step("with save, an inline definition is stored as a new version, then run", async () => {
      const run = await startWorkflowRun(ctx, { definition: def(hello), save: true, input: { name: "al" } });
      assertEquals([run.workflow_id, run.workflow_version], ["hello", 1]);
      assertEquals(ctx.workflows.record("hello").status, "active");
    });
    await t.step("a stored workflow runs by id, at its latest or a given version", async () => {
      ctx.workflows.save(def({ ...hello, states: [{ ...hello.states[0], data: { text: "v2" } }] }), {
        source: "api",
      });
      const latest = await startWorkflowRun(ctx, { workflowId: "hello", input: {} });
      const first = await startWorkflowRun(ctx, { workflowId: "hello", version: 1, input: { name: "bo" } });
      assertEquals([latest.workflow_version, first.workflow_version], [2, 1]);
      assertEquals(JSON.parse((await waitRun(ctx.engine, first.id)).result!), { text: "hi bo" });
    });
    await t.step("an invalid definition is a 400 listing its problems, and nothing is stored", async () => {
      const err = await fails({
        definition: { id: "broken", states: [{ id: "x", type: "nope" }] },
        input: {},
      });
      assertEquals([err.code, err.status], ["invalid_definition", 400]);
      assert(err.message.includes("/states/0"), err.message);
      assertEquals(ctx.workflows.list({}).some((w) => w.id === "broken"), false);
    });
    await t.step(
      "neither a workflow id nor a definition is a 400; a disabled workflow is a 409",
      async () => {
        assertEquals((await fails({ input: {} })).code, "invalid_request");
        ctx.workflows.disable("hello");
        const err = await fails({ workflowId: "hello", input: {} });
        assertEquals([err.code, err.status], ["workflow_disabled", 409]);
      },
    );
  } finally {
    await close();
  }
});
