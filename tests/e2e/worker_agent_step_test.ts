import { StationClient } from "../../src/client/http.ts";
import { listAgentRuns } from "../../src/client/agent_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { getRun, runEvents, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { syncWorkflows } from "../../src/client/workflows.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { singleNats, startWorkerProcess } from "../helpers/cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { startServe, waitFor } from "../helpers/stn.ts";

// A worker runs agent steps (tests/e2e/worker_agents_test.ts), except an agent with child agents: their runs
// are started by the station's agent service, so a worker that takes such a step hands it to the station.
Deno.test("workers: an agent step whose agent has child agents is run by the station, even one with no local workers", async () => {
  const home = await tempHome();
  const model = startModelServer();
  model.script({ text: "Hello from the station." });
  home.writeConfig(`ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  const agents = home.path("environments", "default", "agents");
  Deno.writeTextFileSync(`${agents}/Greeter.prompt`, "---\nagents: [Helper]\n---\n{{userInput}}\n");
  Deno.writeTextFileSync(`${agents}/Helper.prompt`, "{{userInput}}\n");
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const worker = startWorkerProcess({ env: home.env, natsUrl: nats.url, name: "w-1" });
  try {
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      worker.stderr(),
    );
    await syncWorkflows(client);
    const run = await startRun(client, {
      definition: {
        id: "greet",
        states: [{ id: "ask", type: "agent", agent: "Greeter", task: "Say hello" }],
      },
      input: {},
    });
    assert(
      await waitFor(
        async () => ["completed", "failed"].includes((await getRun(client, run.id)).status),
        30_000,
      ),
      worker.stderr(),
    );
    const [step] = await runSteps(client, run.id);
    assertEquals([step.status, (step.output as { response?: string })?.response], [
      "completed",
      "Hello from the station.",
    ]);
    const agentRuns = (await listAgentRuns(client, { workflow_run_id: run.id })).runs;
    assertEquals(agentRuns.map((r) => [r.agent, r.status]), [["Greeter", "completed"]]);
    assertEquals(model.requests.length, 1); // run once, not once by the worker and again by the station
    const events = [];
    for await (const e of runEvents(client, run.id, { follow: false })) events.push(e);
    const owners = events.filter((e) => e.type === "step_started").map((e) =>
      (e.data as { owner: string }).owner
    );
    const workerIds = (await listWorkers(client)).workers.map((w) => w.id);
    assertEquals([owners.length, workerIds.includes(owners[0])], [1, false], "the station ran it");
  } finally {
    await worker.stop();
    await serve.stop();
    await nats.stop();
    await model.close();
    await home.cleanup();
  }
});
