import { DatabaseSync } from "node:sqlite";
import { StationClient } from "../../src/client/http.ts";
import { getAgentRun, listAgentRuns, startAgentRun } from "../../src/client/agent_runs.ts";
import { getRun, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

/** An agent's `concurrency:` and `priority:` through a real `stn serve`: every way a run starts shares its keys. */

const SUPPORT = `---
model: openai/test-model
max_steps: 2
concurrency:
  - key: "\${input.customer}"
    limit: 1
  - limit: 20
priority: 3
---
{{role "system"}}
You answer a customer.
{{role "user"}}
{{userInput}}
`;

const taskOf = (r: ModelRequest): string => String(r.body.messages.at(-1)?.content ?? "");

/** Each run's start and end as the ledger recorded them. */
function spans(dbPath: string) {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare("SELECT id, task, started_at, ended_at FROM agent_runs ORDER BY started_at").all() as {
      id: string;
      task: string;
      started_at: string;
      ended_at: string;
    }[];
  } finally {
    db.close();
  }
}

/** A home whose agent Support (one run per customer at a time) calls the scripted model at `modelUrl`. */
async function supportHome(modelUrl: string): Promise<TempHome> {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${modelUrl}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(`${dir}/Support.prompt`, SUPPORT);
  return home;
}

Deno.test("e2e: agent concurrency keys hold for API, CLI and workflow step runs; waiting runs are visible", async () => {
  const model = startModelServer();
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  // Every answer waits for the gate until the test has looked at the waiting runs.
  model.route((req) => ({ text: `answered ${taskOf(req)}`, hold: gate }));
  const home = await supportHome(model.url);
  const serve = await startServe({ env: home.env, home: home.home });
  try {
    const client = new StationClient(serve.url);
    const holder = await startAgentRun(client, "Support", {
      task: "holder",
      variables: { customer: "acme" },
    });
    assertEquals(holder.status, "running");
    await model.waitForRequests(1);
    const other = await startAgentRun(client, "Support", {
      task: "other",
      variables: { customer: "globex" },
    });
    assertEquals(other.status, "running", "another customer's run starts at once");
    await model.waitForRequests(2);
    const api = await startAgentRun(client, "Support", { task: "api", variables: { customer: "acme" } });
    assertEquals(api.status, "waiting_for_concurrency");
    assertEquals(api.waiting_for, { key: "agent:default/Support/acme", position: 1 });
    // The CLI's run, at priority 9 over the agent's 3: admitted before the API's.
    const cli = runStn(["agent", "run", "Support", "cli", "--var", "customer=acme", "--priority", "9"], {
      env: home.env,
    });
    const workflow = await startRun(client, {
      definition: {
        id: "ask-support",
        states: [{
          id: "ask",
          type: "agent",
          agent: "Support",
          task: "workflow",
          input: { variables: { customer: "acme" } },
          end: true,
        }],
      },
      input: {},
    });
    assert(
      await waitFor(
        async () => (await listAgentRuns(client, { status: "waiting_for_concurrency" })).runs.length === 3,
        30_000,
      ),
      "the API's, the CLI's and the workflow step's runs wait",
    );
    // The step stays running while its agent run waits.
    assertEquals((await getRun(client, workflow.run_id)).status, "running");

    const listed = await runStn(["agent", "runs", "--status", "waiting_for_concurrency", "--json"], {
      env: home.env,
    });
    assertEquals(listed.code, 0, listed.stderr);
    const waiting = JSON.parse(listed.stdout).runs as { task: string; waiting_for: { position: number } }[];
    assertEquals(waiting.map((r) => r.task).sort(), ["api", "cli", "workflow"]);
    const inspect = await runStn(["agent", "inspect", api.run_id], { env: home.env });
    assertEquals(inspect.code, 0, inspect.stderr);
    assertStringIncludes(inspect.stdout, "waiting_for_concurrency");
    assertStringIncludes(inspect.stdout, "key agent:default/Support/acme, position 1");
    const page = await (await fetch(`${serve.url}/ui/agent-runs/${api.run_id}`)).text();
    assertStringIncludes(page, "waiting for concurrency key agent:default/Support/acme, position 1");
    assertStringIncludes(page, "Cancel agent run", "a waiting run can be canceled from its page");
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    assertStringIncludes(metrics, 'stn_agent_runs_waiting_for_concurrency{agent="Support"} 3');
    assertEquals(model.requests.map(taskOf).sort(), ["holder", "other"], "no waiting run called the model");

    release();
    const done = await cli;
    assertEquals(done.code, 0, done.stderr);
    assertEquals(done.stdout.trim(), "answered cli");
    assert(
      await waitFor(async () => (await getRun(client, workflow.run_id)).status === "completed", 30_000),
      "the workflow's agent step completes once its run is admitted",
    );
    assertEquals((await getAgentRun(client, api.run_id)).status, "completed");

    // One acme run at a time, from the ledger's timestamps; the CLI's (priority 9) before the API's.
    const acme = spans(home.path("stn.db")).filter((s) => s.task !== "other");
    assertEquals(acme[0].task, "holder");
    assertEquals(acme.slice(1, 2).map((s) => s.task), ["cli"]);
    for (let i = 1; i < acme.length; i++) {
      assert(acme[i].started_at >= acme[i - 1].ended_at, `${acme[i].task} overlapped ${acme[i - 1].task}`);
    }
    const after = await (await fetch(`${serve.url}/metrics`)).text();
    assert(!/stn_agent_runs_waiting_for_concurrency\{/.test(after), "no agent run waits any more");
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("e2e: kill -9 of stn serve while an agent run waits: after the restart it runs once the holder ends", async () => {
  const model = startModelServer();
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  model.route((req) => ({ text: `answered ${taskOf(req)}`, hold: gate }));
  const home = await supportHome(model.url);
  let serve = await startServe({ env: home.env, home: home.home });
  try {
    let client = new StationClient(serve.url);
    const holder = await startAgentRun(client, "Support", {
      task: "holder",
      variables: { customer: "acme" },
    });
    await model.waitForRequests(1);
    const waiter = await startAgentRun(client, "Support", {
      task: "waiter",
      variables: { customer: "acme" },
    });
    assertEquals(waiter.status, "waiting_for_concurrency");
    await serve.stop("SIGKILL");
    release();
    serve = await startServe({ env: home.env, home: home.home });
    client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await getAgentRun(client, waiter.run_id)).status === "completed", 30_000),
      `the waiting run completes after the restart:\n${serve.stderr().slice(-2000)}`,
    );
    const ended = spans(home.path("stn.db"));
    const [h, w] = [ended.find((s) => s.id === holder.run_id)!, ended.find((s) => s.id === waiter.run_id)!];
    assert(w.started_at >= h.ended_at, `the waiter started ${w.started_at}, the holder ended ${h.ended_at}`);
    assertEquals(model.requests.map(taskOf).filter((t) => t === "waiter"), ["waiter"]);
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
