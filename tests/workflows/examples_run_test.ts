import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { listApprovals, startRun } from "../../src/client/workflow_runs.ts";
import { loadWorkflowFile } from "../../src/workflows/definition/load.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { removeStationContainers } from "../sandbox/backend.ts";
import { waitRun } from "./helpers.ts";

const example = async (name: string) => {
  const r = await loadWorkflowFile(
    fileURLToPath(new URL(`../../examples/workflows/${name}`, import.meta.url)),
  );
  assert(r.valid, JSON.stringify(r.errors));
  return r.definition!;
};

// The default images of config.yaml, with python mapped to the image `scripts/images/python` builds (as
// docs/sandboxes.md says to): the examples name no image of their own, so no allow-list edit is needed.
const CONFIG = "sandbox:\n  images:\n    python: stn/python:3.11-local\n";

Deno.test("the sandbox examples run as shipped on the default config: deploy-with-approval, data-pipeline", async () => {
  const t = await startTestStation({ configYaml: CONFIG });
  const { engine, files } = t.station.ctx;
  try {
    // deploy-with-approval: build in a sandbox, approve, 30 s cool-down timer, deploy.
    const deploy = await startRun(t.client, {
      definition: await example("deploy-with-approval.workflow.yaml"),
      input: { service: "api" },
    });
    const pending = await waitFor(
      async () => (await listApprovals(t.client, { run_id: deploy.run_id })).length > 0,
      60_000,
    );
    assert(pending, `no approval: ${JSON.stringify(engine.reads.attempts.list(deploy.run_id))}`);
    const [approval] = await listApprovals(t.client, { run_id: deploy.run_id });
    await t.client.json("POST", `/api/v1/workflow-approvals/${approval.id}/approve`, {
      body: { actor: "ops-lead" },
    });
    const deployed = await waitRun(engine, deploy.run_id, undefined, 120_000);
    assertEquals(deployed.status, "completed", deployed.error ?? "");

    // data-pipeline: a staged file counted in a sandbox, the count published.
    const csv = await files.put(
      "files/rows.csv",
      Readable.toWeb(Readable.from([new TextEncoder().encode("a\nb\nc\n")])) as ReadableStream<Uint8Array>,
    );
    const pipeline = await startRun(t.client, {
      definition: await example("data-pipeline.workflow.json"),
      input: { file_key: csv.key },
    });
    const piped = await waitRun(engine, pipeline.run_id, undefined, 60_000);
    assertEquals(piped.status, "completed", piped.error ?? "");
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});
