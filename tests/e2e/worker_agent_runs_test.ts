import { StationClient } from "../../src/client/http.ts";
import { agentRunEvents, cancelAgentRun, getAgentRun, startAgentRun } from "../../src/client/agent_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import type { AgentRun } from "../../src/contract/agent_runs.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { singleNats, startWorkerProcess, type WorkerProcess } from "../helpers/cluster.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { startTwoWorkers } from "../helpers/two_workers.ts";
import {
  holdThirdTurn,
  LOOPER_PROMPT,
  mcpCalls,
  turnOf,
  workerAgentHome,
} from "../helpers/worker_agent_home.ts";

// Agent runs started directly (CLI, API, MCP) on a task queue run on a `stn worker` serving it
// (docs/workers.md#agent-runs-on-a-queue), with the agent steps' durable-turn guarantee.

/**
 * A home with agents Greeter (no tools), Gpu (`queue: gpu` in its front matter) and Looper (calls the test MCP
 * server's echo, logged to calls.log).
 */
const queueHome = (modelUrl: string) =>
  workerAgentHome(modelUrl, {
    Greeter: "---\nmodel: openai/test-model\n---\n{{userInput}}\n",
    Gpu: "---\nmodel: openai/test-model\nqueue: gpu\n---\n{{userInput}}\n",
    Looper: LOOPER_PROMPT,
  });

async function eventsOf(client: StationClient, runId: string) {
  const events = [];
  for await (const e of agentRunEvents(client, runId, { follow: false })) events.push(e);
  return events;
}

/** Waits for a run to end (a queued or running one polls). */
async function ended(client: StationClient, runId: string, timeoutMs = 60_000): Promise<AgentRun> {
  let run = await getAgentRun(client, runId);
  await waitFor(
    async () => !["queued", "running"].includes((run = await getAgentRun(client, runId)).status),
    timeoutMs,
  );
  return run;
}

Deno.test("agent runs on a queue: `--queue` and the front matter's `queue:` run on the worker serving it", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "hello" }));
  const home = await queueHome(model.url);
  const nats = await singleNats();
  // The station runs steps itself too: a queued agent run still goes to a worker.
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url],
  });
  const worker = startWorkerProcess({
    env: home.env,
    natsUrl: nats.url,
    name: "gpu-1",
    args: ["--queue", "gpu"],
  });
  try {
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      worker.stderr(),
    );
    const [listed] = (await listWorkers(client)).workers;

    const cli = await runStn(["agent", "run", "Greeter", "cli task", "--queue", "gpu", "--follow"], {
      env: home.env,
    });
    assertEquals(cli.code, 0, cli.stderr);
    assertEquals(cli.stdout.trim(), "hello");
    assertStringIncludes(cli.stderr, "taken by worker gpu-1");
    const runs = JSON.parse((await runStn(["agent", "runs", "--json"], { env: home.env })).stdout)
      .runs as AgentRun[];
    assertEquals(runs.map((r) => [r.agent, r.status, r.queue, r.owner]), [[
      "Greeter",
      "completed",
      "gpu",
      listed.id,
    ]]);

    // `queue: gpu` in Gpu.prompt: started through the API without one.
    const started = await startAgentRun(client, "Gpu", { task: "api task" });
    assertEquals(started.queue, "gpu");
    const run = await ended(client, started.run_id);
    assertEquals([run.status, run.response, run.owner], ["completed", "hello", listed.id]);
    const claimed = (await eventsOf(client, run.run_id)).filter((e) => e.type === "run_claimed");
    assertEquals(claimed.map((e) => (e.data as { worker: string }).worker), ["gpu-1"]);

    // Without a queue the station runs it, as before.
    const here = await startAgentRun(client, "Greeter", { task: "station task" }, { wait: true });
    assertEquals([here.status, here.queue, here.owner], ["completed", null, null]);

    // A bad queue name is refused before a run exists.
    const bad = await runStn(["agent", "run", "Greeter", "x", "--queue", "GPU!"], { env: home.env });
    assertEquals(bad.code, 1, bad.stderr);
    assertStringIncludes(bad.stderr, "queue");
  } finally {
    await worker.stop();
    await serve.stop();
    await nats.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("agent runs on a queue: a run waits while no worker serves its queue, then runs when one starts; a cancel reaches the worker", async () => {
  const model = startModelServer();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  model.route((r) =>
    JSON.stringify(r.body.messages).includes("hold me")
      ? { hold: held, text: "never" }
      : { text: "done at last" }
  );
  const home = await queueHome(model.url);
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  let worker: WorkerProcess | undefined;
  try {
    const client = new StationClient(serve.url);
    const started = await startAgentRun(client, "Greeter", { task: "wait for me", queue: "gpu" });
    assertEquals(started.status, "queued");
    assertEquals(started.waiting_for?.queue, "gpu");
    assertStringIncludes(
      started.waiting_for?.reason ?? "",
      "none is serving it (start `stn worker --queue gpu`)",
    );
    // Longer than a lease and more: it still waits, it does not fail.
    await new Promise((r) => setTimeout(r, 5000));
    const waiting = await getAgentRun(client, started.run_id);
    assertEquals([waiting.status, waiting.owner, model.requests.length], ["queued", null, 0]);
    const listed = await runStn(["agent", "runs", "--status", "queued", "--json"], { env: home.env });
    assertEquals(JSON.parse(listed.stdout).runs.map((r: AgentRun) => r.run_id), [started.run_id]);
    const inspect = await runStn(["agent", "inspect", started.run_id], { env: home.env });
    assertStringIncludes(inspect.stdout, "waiting for");
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    assertStringIncludes(metrics, 'stn_agent_runs_queued{queue="gpu"} 1');
    assertEquals((await listWorkers(client)).queued_agent_runs, [{ queue: "gpu", waiting: 1 }]);
    const workers = await runStn(["workers"], { env: home.env });
    assertStringIncludes(workers.stdout, "agent runs queued on gpu: 1");

    worker = startWorkerProcess({
      env: home.env,
      natsUrl: nats.url,
      name: "late-1",
      args: ["--queue", "gpu"],
    });
    const run = await ended(client, started.run_id);
    assertEquals([run.status, run.response], ["completed", "done at last"]);
    const { workers: [w], queued_agent_runs } = await listWorkers(client);
    assertEquals(run.owner, w.id);
    assertEquals(queued_agent_runs, []);

    // Canceled while its model call runs on the worker: the worker aborts the call.
    const hold = await startAgentRun(client, "Greeter", { task: "hold me", queue: "gpu" });
    await model.waitForRequests(2, 30_000);
    const canceled = await cancelAgentRun(client, hold.run_id, "not needed");
    assertEquals(canceled.status, "canceled");
    assert(await waitFor(() => model.requests[1].aborted, 20_000), "the worker aborted the model call");
    release();
    const after = await ended(client, hold.run_id);
    assertEquals([after.status, after.error?.code], ["canceled", "canceled"]);
    assertEquals(model.requests.length, 2);
  } finally {
    release();
    await worker?.stop();
    await serve.stop();
    await nats.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("agent runs on a queue: kill -9 of the worker mid tool loop: another worker finishes the run, no finished model or tool call repeated", async () => {
  const model = startModelServer();
  // The third model call is held until its worker is killed: it never finishes there.
  const third = holdThirdTurn(model);
  const home = await queueHome(model.url);
  const { serve, workers, client, stop } = await startTwoWorkers(home, ["--queue", "tools"]);
  try {
    const listed = (await listWorkers(client)).workers;
    const started = await startAgentRun(client, "Looper", { task: "Echo twice", queue: "tools" });
    await model.waitForRequests(3, 30_000);
    const { owner } = await getAgentRun(client, started.run_id);
    const holder = listed.find((w) => w.id === owner)!;
    const victim = workers.find((w) => w.name === holder.name)!;
    assertEquals((await victim.stop("SIGKILL")).signal, "SIGKILL");
    third.release();

    const run = await ended(client, started.run_id);
    assertEquals(
      [run.status, run.response, run.turns],
      ["completed", "all done", 3],
      serve.stderr().slice(-3000),
    );
    const survivor = listed.find((w) => w.id !== holder.id)!;
    assertEquals(run.owner, survivor.id);
    const events = await eventsOf(client, run.run_id);
    assertEquals(
      events.filter((e) => e.type === "run_claimed").map((e) => (e.data as { owner: string }).owner),
      [holder.id, survivor.id],
    );
    assertEquals(events.filter((e) => e.type === "run_resumed").length, 1);
    assertEquals(events.filter((e) => e.type === "tool_called").length, 2);
    // The model: turns 1 and 2 asked once each; turn 3 twice (its first answer was held until its worker was
    // dead, so no process got it), and nothing after.
    assertEquals(model.requests.map(turnOf), [0, 1, 2, 2]);
    // The MCP server (started on each worker): each finished tool call made once.
    assertEquals(mcpCalls(home), ['echo {"text":"call-1"}', 'echo {"text":"call-2"}']);
  } finally {
    third.release();
    await stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("agent runs on a queue: a worker stopped with SIGTERM hands its run back; another worker finishes it", async () => {
  const model = startModelServer();
  let first = true;
  // The first model call (on the first worker) is held until that worker aborts it; the next is answered.
  model.route(() => {
    if (!first) return { text: "finished elsewhere" };
    first = false;
    return { hold: new Promise<void>(() => {}), text: "never" };
  });
  const home = await queueHome(model.url);
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const workers: WorkerProcess[] = [];
  try {
    const client = new StationClient(serve.url);
    workers.push(startWorkerProcess({
      env: home.env,
      natsUrl: nats.url,
      name: "drain-1",
      args: ["--queue", "gpu", "--drain-timeout", "1"],
    }));
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      workers[0].stderr(),
    );
    const [one] = (await listWorkers(client)).workers;
    const started = await startAgentRun(client, "Greeter", { task: "drain me", queue: "gpu" });
    await model.waitForRequests(1, 30_000);
    workers.push(
      startWorkerProcess({ env: home.env, natsUrl: nats.url, name: "drain-2", args: ["--queue", "gpu"] }),
    );
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 2, 20_000),
      workers[1].stderr(),
    );
    assertEquals((await workers[0].stop("SIGTERM")).code, 0, workers[0].stderr());

    const run = await ended(client, started.run_id);
    assertEquals(
      [run.status, run.response],
      ["completed", "finished elsewhere"],
      serve.stderr().slice(-3000),
    );
    const two = (await listWorkers(client)).workers.find((w) => w.name === "drain-2")!;
    const events = (await eventsOf(client, run.run_id)).map((
      e,
    ) => [e.type, (e.data as { owner?: string })?.owner]);
    assertEquals(events.filter(([t]) => t === "run_claimed" || t === "run_released"), [
      ["run_claimed", one.id],
      ["run_released", one.id],
      ["run_claimed", two.id],
    ]);
    assertEquals([model.requests.length, model.requests[0].aborted], [2, true]);
  } finally {
    for (const w of workers) await w.stop();
    await serve.stop();
    await nats.stop();
    await model.close();
    await home.cleanup();
  }
});
