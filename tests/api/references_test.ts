import { startRun } from "../../src/client/workflow_runs.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";

const AGENT = "---\nmodel: openai/test-model\n---\n{{userInput}}\n";

/** A workflow with one step of the given shape. */
const workflow = (id: string, step: Record<string, unknown>) => ({
  id,
  states: [{ id: "only", ...step, end: true }],
});

Deno.test("apply, sync and run check agent and image references first: the name, a hint, nothing stored or run", async (t) => {
  const ts = await startTestStation({
    configYaml: "ai:\n  provider: openai\n  api_key: sk-test\nsandbox:\n  enabled: false\n",
  });
  const { client, station } = ts;
  const agents = ts.home.path("environments", "default", "agents");
  Deno.mkdirSync(agents, { recursive: true });
  Deno.writeTextFileSync(`${agents}/Helper.prompt`, AGENT);
  const error = async (p: Promise<unknown>) => (await assertRejects(() => p, StationError)) as StationError;
  try {
    await client.json("POST", "/api/v1/sync", { body: {} });

    await t.step("apply: an unknown agent is workflow_invalid naming it, with the agents there", async () => {
      const err = await error(client.json("POST", "/api/v1/workflows", {
        body: workflow("asks-nobody", { type: "agent", agent: "Helpr", task: "hi" }),
      }));
      assertEquals([err.code, err.status], ["workflow_invalid", 422]);
      assertStringIncludes(err.message, "no agent `Helpr` in environment `default`");
      assertEquals(err.hint, "did you mean `Helper`?");
      assertEquals(station.ctx.workflows.has("asks-nobody"), false);
      const ok = await client.json<{ outcome: string }>("POST", "/api/v1/workflows", {
        body: workflow("asks-helper", { type: "agent", agent: "Helper", task: "hi" }),
      });
      assertEquals(ok.outcome, "created");
    });

    await t.step(
      "apply: an image the config does not allow is refused with the setting to change",
      async () => {
        const err = await error(client.json("POST", "/api/v1/workflows", {
          body: workflow("odd-image", { type: "sandbox", image: "evil/miner:latest", command: ["true"] }),
        }));
        assertEquals(err.code, "workflow_invalid");
        assertStringIncludes(err.message, '/states/0/image: image "evil/miner:latest" is not allowed');
        assertStringIncludes(err.hint ?? "", "sandbox.allowed_images");
      },
    );

    await t.step(
      "sync: a workflow file naming an unknown agent or a refused image is invalid, not stored",
      async () => {
        const dir = ts.home.path("environments", "default", "workflows");
        Deno.mkdirSync(dir, { recursive: true });
        Deno.writeTextFileSync(
          `${dir}/asks-ghost.workflow.yaml`,
          "id: asks-ghost\nstates:\n  - id: only\n    type: agent\n    agent: Helpr\n    task: hi\n",
        );
        Deno.writeTextFileSync(
          `${dir}/odd-image.workflow.yaml`,
          "id: odd-image\nstates:\n  - id: only\n    type: sandbox\n    image: evil/miner:latest\n" +
            '    command: ["true"]\n',
        );
        const report = await client.json<
          { invalid: { file: string; errors: { code: string; hint?: string }[] }[] }
        >(
          "POST",
          "/api/v1/sync",
          { body: {} },
        );
        const byFile = Object.fromEntries(
          report.invalid.map((i) => [i.file.split("/").at(-1), i.errors.map((e) => [e.code, e.hint])]),
        );
        assertEquals(byFile["asks-ghost.workflow.yaml"], [["unknown_agent", "did you mean `Helper`?"]]);
        assertEquals(byFile["odd-image.workflow.yaml"]?.[0]?.[0], "image_not_allowed");
        assertStringIncludes(String(byFile["odd-image.workflow.yaml"]?.[0]?.[1]), "sandbox.allowed_images");
        assertEquals([station.ctx.workflows.has("asks-ghost"), station.ctx.workflows.has("odd-image")], [
          false,
          false,
        ]);
        for (const f of ["asks-ghost", "odd-image"]) Deno.removeSync(`${dir}/${f}.workflow.yaml`);
      },
    );

    await t.step("run of a file: the same checks, as the error the run would have failed with", async () => {
      const before = station.ctx.engine.reads.runs.list({ limit: 50 }).runs.length;
      const agent = await error(startRun(client, {
        definition: workflow("asks-nobody", { type: "agent", agent: "Nobody", task: "hi" }),
      }));
      assertEquals([agent.code, agent.status], ["agent_not_found", 404]);
      assertStringIncludes(agent.message, "no agent `Nobody`");
      assert(agent.hint?.includes("Helper"), agent.hint);
      const runtime = await error(startRun(client, {
        definition: workflow("odd-runtime", { type: "sandbox", runtime: "cobol", command: ["true"] }),
      }));
      // Sandboxes are off here: that is said first; the runtime is checked where they are on.
      assertEquals(runtime.code, "sandbox_unavailable");
      assertEquals(station.ctx.engine.reads.runs.list({ limit: 50 }).runs.length, before, "no run recorded");
    });
  } finally {
    await ts.close();
  }
});
