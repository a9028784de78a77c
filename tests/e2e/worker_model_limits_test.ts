import type { StationClient } from "../../src/client/http.ts";
import { agentRunEvents, listAgentRuns } from "../../src/client/agent_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { runEvents, startRun, waitForRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { type TempHome, tempHome } from "../helpers/home.ts";
import { type LimitedModel, maxPerMinute, startLimitedModel } from "../helpers/limited_model.ts";
import { waitFor } from "../helpers/stn.ts";
import { startTwoWorkers } from "../helpers/two_workers.ts";

// `ai.limits` on `stn worker`s (docs/workers.md#model-limits): each worker asks the station for every model
// call's permit, so a limit holds for all the machines' calls together, checked from the provider's side.

/** A home whose agent Plain calls openai/test-model under these limits. */
async function limitedHome(model: LimitedModel, limits: string): Promise<TempHome> {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.server.url}\n  api_key: sk-test\n  limits:\n    ${limits}\n` +
      `engine:\n  lease: 2s\n  ack_wait: 2s\n`,
  );
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  // A wait for capacity counts against the run's deadline: these wait up to a minute.
  Deno.writeTextFileSync(
    home.path("environments", "default", "agents", "Plain.prompt"),
    "---\nmodel: openai/test-model\ntimeout: 5m\n---\n{{userInput}}\n",
  );
  return home;
}

/** One-step workflow runs of agent Plain, started at once. */
async function startAgentSteps(client: StationClient, n: number): Promise<string[]> {
  return await Promise.all(Array.from({ length: n }, async (_, i) =>
    (await startRun(client, {
      definition: {
        id: "ask",
        states: [{ id: "ask", type: "agent", agent: "Plain", task: `question ${i}` }],
      },
      input: {},
    })).id));
}

/** The reasons of the `model_throttled` events of the agent runs of these workflow runs. */
async function throttleReasons(client: StationClient, runIds: string[]): Promise<string[]> {
  const reasons: string[] = [];
  for (const id of runIds) {
    for (const r of (await listAgentRuns(client, { workflow_run_id: id })).runs) {
      for await (const e of agentRunEvents(client, r.run_id, { follow: false })) {
        if (e.type === "model_throttled") reasons.push((e.data as { reason: string }).reason);
      }
    }
  }
  return reasons;
}

Deno.test("workers: ai.limits concurrency and tokens_per_minute hold for the calls of both workers together", async () => {
  // Each call takes 300 ms and reports 40 tokens: 200 a minute lets five go, the sixth waits for the minute.
  const model = startLimitedModel({ holdMs: 300, usage: { input: 30, output: 10 } });
  const home = await limitedHome(model, '"openai/test-model": {concurrency: 2, tokens_per_minute: 200}');
  const c = await startTwoWorkers(home);
  try {
    const ids = await startAgentSteps(c.client, 6);
    for (const id of ids) {
      const ended = await waitForRun(c.client, id, { timeoutMs: 180_000 });
      assertEquals(ended?.status, "completed", c.workers.map((w) => w.stderr().slice(-2000)).join("\n"));
    }
    assertEquals(model.served.length, 6);
    assert(model.maxInFlight() <= 2, `${model.maxInFlight()} calls were in flight at once (limit 2)`);
    const tokens = maxPerMinute(model.served, "tokens");
    assert(tokens <= 200, `the provider served ${tokens} tokens within a minute (limit 200)`);
    const reasons = await throttleReasons(c.client, ids);
    assert(reasons.includes("tokens_per_minute"), `a run waited for the token budget (${reasons})`);
    assert(reasons.includes("concurrency"), `a run waited for a concurrency slot (${reasons})`);
    // The agent steps ran on the workers, both of them (the station runs no steps here).
    const owners = new Set<string>();
    for (const id of ids) {
      for await (const e of runEvents(c.client, id, { follow: false })) {
        if (e.type === "step_started") owners.add((e.data as { owner: string }).owner);
      }
    }
    const workerIds = (await listWorkers(c.client)).workers.map((w) => w.id);
    assert([...owners].every((o) => workerIds.includes(o)), "every step ran on a worker");
  } finally {
    await c.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("workers: a provider's Retry-After seen on a worker holds after that worker is killed: the next worker waits it out", async () => {
  const model = startLimitedModel();
  // The first call is refused for 20 s; the rest are answered.
  const arrivals: number[] = [];
  model.server.route(() => {
    arrivals.push(Date.now());
    return arrivals.length === 1
      ? { status: 429, text: "rate limit reached", headers: { "retry-after": "20" } }
      : { text: "after the wait" };
  });
  const home = await limitedHome(model, "openai: {concurrency: 4}");
  const c = await startTwoWorkers(home);
  try {
    const [id] = await startAgentSteps(c.client, 1);
    await model.server.waitForRequests(1, 30_000);
    // The worker holding the step waits out the Retry-After (it reported it, then recorded the wait); it is
    // killed in the middle of that wait.
    assert(
      await waitFor(async () => (await throttleReasons(c.client, [id])).includes("retry_after"), 10_000),
      "the worker recorded its wait",
    );
    const holds = async () =>
      (await listWorkers(c.client)).workers.find((w) => w.in_flight.some((f) => f.run_id === id));
    assert(await waitFor(async () => (await holds()) !== undefined, 10_000), "a worker holds the agent step");
    const holder = (await holds())!;
    const killed = c.workers.find((w) => w.name === holder.name)!;
    assertEquals((await killed.stop("SIGKILL")).signal, "SIGKILL");

    const ended = await waitForRun(c.client, id, { timeoutMs: 90_000 });
    assertEquals(ended?.status, "completed", c.serve.stderr().slice(-3000));
    // The other worker asked the station, which still held the model: no call before the 20 s were up.
    assertEquals(arrivals.length, 2);
    assert(arrivals[1] - arrivals[0] >= 20_000, `called again ${arrivals[1] - arrivals[0]} ms after the 429`);
    const [run] = (await listAgentRuns(c.client, { workflow_run_id: id })).runs;
    const waits = [];
    for await (const e of agentRunEvents(c.client, run.run_id, { follow: false })) {
      if (e.type === "model_throttled") waits.push(e.data as { reason: string; key: string });
    }
    assertEquals(waits.map((w) => [w.reason, w.key]), [["retry_after", "openai"], ["retry_after", "openai"]]);
  } finally {
    await c.stop();
    await model.close();
    await home.cleanup();
  }
});
