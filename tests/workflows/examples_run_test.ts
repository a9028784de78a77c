import { cp } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { sendEvent } from "../../src/client/events.ts";
import { decideApproval, getRun, listApprovals, startRun } from "../../src/client/workflow_runs.ts";
import { saveWorkflow } from "../../src/client/workflows.ts";
import type { Run } from "../../src/contract/runs.ts";
import { loadWorkflowFile } from "../../src/workflows/definition/load.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { startTestStation, type TestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { removeStationContainers } from "../sandbox/backend.ts";
import { waitRun } from "./helpers.ts";

/**
 * Every example of examples/workflows/ run as shipped on one station: the agents they name are the example
 * environments' (examples/environments/{default,prod}), answering through the scripted model server;
 * approvals are answered, events sent, timers waited out; each run must complete.
 */

const DIR = fileURLToPath(new URL("../../examples/workflows/", import.meta.url));
const ENVIRONMENTS = fileURLToPath(new URL("../../examples/environments/", import.meta.url));

const example = async (name: string) => {
  const r = await loadWorkflowFile(join(DIR, name));
  assert(r.valid, JSON.stringify(r.errors));
  return r.definition!;
};

/** The default images of config.yaml, python mapped to the image `scripts/images/python` builds (docs/sandboxes.md). */
const config = (modelUrl: string) =>
  `ai:\n  provider: openai\n  model: openai/test-model\n  base_url: ${modelUrl}\n  api_key: sk-test\n` +
  "sandbox:\n  images:\n    python: stn/python:3.11-local\n";

/** The scripted model: each example agent answered by what its system prompt asks for. */
function answer(r: ModelRequest) {
  const system = String(r.body.messages[0]?.content ?? "");
  if (system.includes("You triage alerts")) {
    return { text: JSON.stringify({ severity: "high", summary: "checkout answers 500 to every request" }) };
  }
  if (system.includes("You check a work queue")) {
    return { text: JSON.stringify({ healthy: true, reason: "drains faster than it fills" }) };
  }
  if (system.includes("morning digest")) return { text: "- nothing broke overnight" };
  if (system.includes("cloud spend")) return { text: "Spend was flat; no figures were given." };
  return { text: `unexpected agent: ${system.slice(0, 80)}`, status: 500 };
}

/** Answers the run's first pending approval (approve) once it is asked. */
async function approve(t: TestStation, run: Run, actor: string): Promise<void> {
  const asked = await waitFor(
    async () => (await listApprovals(t.client, { run_id: run.run_id })).length > 0,
    90_000,
  );
  assert(asked, `${run.workflow_id}: no approval (${(await getRun(t.client, run.run_id)).status})`);
  const [pending] = await listApprovals(t.client, { run_id: run.run_id });
  await decideApproval(t.client, pending.id, "approve", { actor });
}

/** Waits until the run is waiting (parked at its await step). */
async function parked(t: TestStation, run: Run): Promise<void> {
  const ok = await waitFor(async () => (await getRun(t.client, run.run_id)).status === "waiting", 60_000);
  assert(ok, `${run.workflow_id} never waited`);
}

Deno.test("every example workflow runs to completion as shipped (agents, approvals, events, timers, sandboxes)", async () => {
  const model = startModelServer();
  model.route(answer);
  const t = await startTestStation({ configYaml: config(model.url) });
  const { engine, files } = t.station.ctx;
  try {
    for (const env of ["default", "prod"]) {
      await cp(join(ENVIRONMENTS, env, "agents"), t.home.path("environments", env, "agents"), {
        recursive: true,
      });
    }
    await t.client.json("POST", "/api/v1/sync", { body: {} });
    await t.client.json("POST", "/api/v1/sync", { body: { environment: "prod" } });

    const csv = await files.put(
      "files/rows.csv",
      Readable.toWeb(Readable.from([new TextEncoder().encode("a\nb\nc\n")])) as ReadableStream<Uint8Array>,
    );
    const inputs: Record<string, Record<string, unknown>> = {
      "triage.workflow.yaml": { alerts: [{ name: "cpu", severity: 9 }, { name: "disk", severity: 3 }] },
      "batch-report.workflow.yaml": { repos: [{ name: "a", stars: 40 }, { name: "b", stars: 2 }] },
      "incident-triage.workflow.yaml": { service: "checkout", alert: "error rate 30%" },
      "nightly-digest.workflow.yaml": { channel: "#ops" },
      "parallel-health-check.workflow.yaml": { host: "api.example.com" },
      "legacy-go-form.workflow.yaml": {},
      "poll-until-ready.workflow.yaml": {},
      "deploy-on-ci.workflow.yaml": { service: "api", commit: "abc1234" },
      "deploy-with-approval.workflow.yaml": { service: "api" },
      "data-pipeline.workflow.json": { file_key: csv.key },
      "safe-migration.workflow.yaml": {},
    };
    // on-push runs when its trigger's event arrives: it is applied (stored) rather than run as a file.
    const shipped = [...Deno.readDirSync(DIR)].map((e) => e.name).filter((n) => /\.workflow\./.test(n))
      .sort();
    assertEquals(
      shipped,
      [...Object.keys(inputs), "on-push.workflow.yaml"].sort(),
      "an example without a run here",
    );

    const runs: Record<string, Run> = {};
    for (const [file, input] of Object.entries(inputs)) {
      runs[file] = await startRun(t.client, { definition: await example(file), input });
    }
    await saveWorkflow(t.client, await example("on-push.workflow.yaml"));
    const pushed = await sendEvent(t.client, {
      name: "github.push",
      data: { ref: "refs/heads/main", after: "0123456789abcdef", repository: { full_name: "acme/api" } },
    });
    const pushRun = pushed.event.started.find((s) => s.workflow_id === "on-push")?.run_id;
    assert(pushRun, `the push started no run: ${JSON.stringify(pushed)}`);

    await parked(t, runs["deploy-on-ci.workflow.yaml"]);
    await sendEvent(t.client, { name: "ci.finished", data: { commit: "abc1234", status: "success" } });
    await approve(t, runs["legacy-go-form.workflow.yaml"], "finance");
    await approve(t, runs["deploy-with-approval.workflow.yaml"], "ops-lead");

    const outputs: Record<string, unknown> = {};
    for (
      const [file, run] of [...Object.entries(runs), ["on-push.workflow.yaml", { run_id: pushRun }] as const]
    ) {
      const done = await waitRun(engine, run.run_id, undefined, 180_000);
      assertEquals(done.status, "completed", `${file}: ${done.error ?? ""}`);
      outputs[file] = (await getRun(t.client, run.run_id)).result;
    }
    // What each run made of its agents' answers and its events.
    assertEquals((outputs["incident-triage.workflow.yaml"] as { action: string }).action, "page");
    assertEquals(outputs["deploy-on-ci.workflow.yaml"], {
      deployed: "api",
      commit: "abc1234",
      ci_event: (outputs["deploy-on-ci.workflow.yaml"] as { ci_event: string }).ci_event,
    });
    assertEquals((outputs["on-push.workflow.yaml"] as { build: string }).build, "acme/api@0123456");
    // The join keys each branch's last output by branch name; the agent's verdict counts too.
    assertEquals(
      (outputs["parallel-health-check.workflow.yaml"] as { all_healthy: boolean }).all_healthy,
      true,
    );
    const agents = model.requests.map((r) => String(r.body.messages[0]?.content ?? "").slice(0, 20));
    assertEquals(agents.length, 4, `one model call per agent step: ${agents.join(" | ")}`);
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
    await model.close();
  }
});
