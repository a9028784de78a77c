import { StationClient } from "../../src/client/http.ts";
import { agentRunEvents, listAgentRuns } from "../../src/client/agent_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { runEvents, runSteps, startRun, waitForRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { singleNats, startWorkerProcess } from "../helpers/cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";
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
import { openDatabase } from "../../src/db/database.ts";
import { stationId } from "../../src/sandbox/ledger.ts";
import { removeStationContainers, SANDBOX_CONFIG, testBackend } from "../sandbox/backend.ts";

// Agent steps run on `stn worker`s (docs/workers.md#agent-steps): the loop, the model calls and the MCP
// servers on the worker, every turn and tool call committed by the station before the loop goes on.

/** A home whose agent Looper calls the test MCP server's echo; MCP calls are logged to calls.log. */
const agentHome = (modelUrl: string) => workerAgentHome(modelUrl, { Looper: LOOPER_PROMPT });

Deno.test("workers: kill -9 of a worker mid tool loop: another worker finishes the agent step, no finished model or tool call repeated", async () => {
  const model = startModelServer();
  const home = await agentHome(model.url);
  // The third model call is held until its worker is killed: it never finishes there.
  const third = holdThirdTurn(model);
  const { serve, workers, client, stop } = await startTwoWorkers(home);
  try {
    const listed = (await listWorkers(client)).workers;
    assertEquals(listed.map((w) => w.agents), [true, true], "both workers run agent steps");
    const run = await startRun(client, {
      definition: { id: "loop", states: [{ id: "ask", type: "agent", agent: "Looper", task: "Echo twice" }] },
      input: {},
    });
    await model.waitForRequests(3, 30_000);
    // Which worker holds it, as its heartbeats (every lease/3) tell the station; it holds it until killed.
    const holds = async () =>
      (await listWorkers(client)).workers.find((w) => w.in_flight.some((f) => f.run_id === run.id));
    assert(await waitFor(async () => (await holds()) !== undefined, 10_000), "a worker holds the agent step");
    const holder = (await holds())!;
    const victim = workers.find((w) => w.name === holder.name)!;
    assertEquals((await victim.stop("SIGKILL")).signal, "SIGKILL");
    third.release();

    const ended = await waitForRun(client, run.id, { timeoutMs: 60_000 });
    assertEquals(ended?.status, "completed", serve.stderr().slice(-3000));
    const [step] = await runSteps(client, run.id);
    assertEquals((step.output as { response: string }).response, "all done");

    // Run on the killed worker, then taken over by the other one (recorded on the step's events).
    const events = [];
    for await (const e of runEvents(client, run.id, { follow: false })) events.push(e);
    const owners = events.filter((e) => e.type === "step_started").map((e) =>
      (e.data as { owner: string }).owner
    );
    const survivor = listed.find((w) => w.name !== holder.name)!;
    assertEquals(owners, [holder.id, survivor.id]);
    assert(events.some((e) => e.type === "step_reclaimed"), "the step was reclaimed");

    // The model: turns 1 and 2 asked once each; turn 3 twice — its first answer was held until its worker
    // was dead, so no process got it — and nothing after.
    assertEquals(model.requests.map(turnOf), [0, 1, 2, 2]);
    // The MCP server (started on each worker): each finished tool call made once.
    assertEquals(mcpCalls(home), ['echo {"text":"call-1"}', 'echo {"text":"call-2"}']);

    const agentRuns = (await listAgentRuns(client, { workflow_run_id: run.id })).runs;
    assertEquals(agentRuns.map((r) => [r.agent, r.status, r.turns]), [["Looper", "completed", 3]]);
    const types = [];
    for await (const e of agentRunEvents(client, agentRuns[0].run_id, { follow: false })) types.push(e.type);
    assertEquals(types.filter((t) => t === "run_resumed").length, 1);
    assertEquals(types.filter((t) => t === "tool_called").length, 2);
  } finally {
    third.release();
    await stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("workers: agent steps of one run go to both workers; their sandboxes are created by the workers, not the station", async () => {
  const model = startModelServer();
  const home = await tempHome();
  home.writeConfig(
    `${SANDBOX_CONFIG}ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`,
  );
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  Deno.writeTextFileSync(
    home.path("environments", "default", "agents", "Boxer.prompt"),
    "---\nmodel: openai/test-model\nsandbox: {mode: code, session: workflow}\nmax_steps: 4\n---\n{{userInput}}\n",
  );
  // Both branches' first model calls are held until both arrived (one worker each, at concurrency 1); their
  // second ones until the test has seen both sandboxes.
  let bothAsked!: () => void;
  const asked = new Promise<void>((r) => (bothAsked = r));
  let seen!: () => void;
  const looked = new Promise<void>((r) => (seen = r));
  model.route((r) => {
    const first = turnOf(r) === 0;
    if (first && model.requests.filter((q) => turnOf(q) === 0).length === 2) bothAsked();
    return first
      ? { hold: asked, calls: [{ name: "sandbox_exec", args: { cmd: "echo hi" } }] }
      : { hold: looked, text: "boxed" };
  });
  const { serve, workers, client, stop } = await startTwoWorkers(home, ["--concurrency", "1"]);
  const backend = testBackend();
  try {
    const listed = (await listWorkers(client)).workers;
    const run = await startRun(client, {
      definition: {
        id: "boxes",
        states: [{
          id: "par",
          type: "parallel",
          branches: ["a", "b"].map((name) => ({
            name,
            states: [{ id: `box_${name}`, type: "agent", agent: "Boxer", task: `box ${name}` }],
          })),
        }],
      },
      input: {},
    });
    assert(
      await waitFor(() => model.requests.filter((q) => turnOf(q) === 1).length === 2, 60_000),
      workers.map((w) => w.stderr()).join("\n"),
    );
    // The run's sandboxes: one per worker, each labelled with the worker's own sandbox id, not the station's.
    const containers = await backend.listManaged({ "dev.stn.run": run.id });
    const creators = new Set(containers.map((c) => c.labels["dev.stn.station"]));
    const db = openDatabase(home.path("stn.db"));
    const station = stationId(db);
    db.close();
    assertEquals([containers.length, creators.size, creators.has(station)], [2, 2, false]);
    seen();

    const ended = await waitForRun(client, run.id, { timeoutMs: 60_000 });
    assertEquals(ended?.status, "completed", serve.stderr().slice(-3000));
    const events = [];
    for await (const e of runEvents(client, run.id, { follow: false })) events.push(e);
    const owners = new Map(
      events.filter((e) => e.type === "step_started" && e.step?.includes("box_"))
        .map((e) => [e.step, (e.data as { owner: string }).owner]),
    );
    assertEquals(owners.size, 2);
    assertEquals(new Set(owners.values()), new Set(listed.map((w) => w.id)), "one agent step on each worker");
    assert(
      await waitFor(async () => (await backend.listManaged({ "dev.stn.run": run.id })).length === 0, 20_000),
      "the workers remove the run's sandboxes when it ends",
    );
  } finally {
    bothAsked();
    seen();
    await stop();
    await model.close();
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
  }
});

Deno.test("workers: an MCP server whose command the worker's machine lacks fails the agent step, naming the worker", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "never asked" }));
  const home = await tempHome();
  home.writeConfig(`ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`);
  // `stn-test-mcp` is on the station's PATH only (as if installed on the station's machine alone).
  const bin = home.path("bin");
  Deno.mkdirSync(bin);
  const entry = stdioServerEntry();
  Deno.writeTextFileSync(`${bin}/stn-test-mcp`, `#!/bin/sh\nexec ${entry.command} ${entry.args.join(" ")}\n`);
  Deno.chmodSync(`${bin}/stn-test-mcp`, 0o755);
  const stationEnv = { ...home.env, PATH: `${bin}:${Deno.env.get("PATH")}` };
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.writeTextFileSync(`${env}/agents/Looper.prompt`, '---\ntools: ["__echo"]\n---\n{{userInput}}\n');
  Deno.writeTextFileSync(
    `${env}/servers.json`,
    JSON.stringify({ mcpServers: { local: { command: "stn-test-mcp" } } }),
  );
  const sync = await runStn(["sync", "--trust"], { env: stationEnv });
  assertEquals(sync.code, 0, sync.stderr);
  const nats = await singleNats();
  const serve = await startServe({
    env: stationEnv,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const worker = startWorkerProcess({ env: home.env, natsUrl: nats.url, name: "bare-1" });
  try {
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      worker.stderr(),
    );
    const run = await startRun(client, {
      definition: { id: "bare", states: [{ id: "ask", type: "agent", agent: "Looper", task: "echo" }] },
      input: {},
    });
    const ended = await waitForRun(client, run.id, { timeoutMs: 60_000 });
    assertEquals(ended?.status, "failed");
    const [step] = await runSteps(client, run.id);
    assert(step.error?.message.includes("on worker bare-1"), JSON.stringify(step.error));
    assert(step.error?.message.includes("stn-test-mcp"), JSON.stringify(step.error));
    assertEquals(model.requests.length, 0, "the model is not asked without the agent's tools");
  } finally {
    await worker.stop();
    await serve.stop();
    await nats.stop();
    await model.close();
    await home.cleanup();
  }
});
