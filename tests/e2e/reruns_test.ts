/**
 * Issue 32's acceptance with real parts (stn serve, NATS, SQLite, Docker, the stn CLI; the model is the scripted
 * server): a retry completes a failed run with no new model call and no new sandbox exec, a fork re-runs only
 * the fork point and what follows with the earlier output reused byte-identically, and `stn workflow eval`
 * evaluates against the recorded data.
 */
import { StationClient } from "../../src/client/http.ts";
import { listAgentRuns } from "../../src/client/agent_runs.ts";
import {
  forkRun,
  getRun,
  runEvents,
  runSteps,
  startRun,
  waitForRun,
} from "../../src/client/workflow_runs.ts";
import { saveWorkflow, syncWorkflows } from "../../src/client/workflows.ts";
import type { RunEvent, Step } from "../../src/contract/runs.ts";
import { PLAIN_PROMPT } from "../helpers/agents.ts";
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { SANDBOX_CONFIG } from "../sandbox/backend.ts";

const pipeline = (total: string) => ({
  id: "repairable",
  states: [
    { id: "plan", type: "agent", agent: "Planner", task: "Plan the report", next: "write" },
    { id: "write", type: "agent", agent: "Writer", task: "Write from: {{ plan.response }}", next: "build" },
    { id: "build", type: "sandbox", command: ["sh", "-c", "echo built"], next: "total" },
    { id: "total", type: "transform", expression: total },
  ],
});
// `+` on a string fails when it runs (a syntax error would be refused when the definition is saved).
const broken = pipeline(`{ 'total': $sum(items.price) + "x" }`);
const fixed = pipeline(`{ 'total': $sum(items.price) }`);
const input = { items: [{ price: 2 }, { price: 3 }, { price: 5 }] };

async function events(client: StationClient, runId: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  for await (const e of runEvents(client, runId, { follow: false })) all.push(e);
  return all;
}

/** Sandbox execs as the ledger records them: `step_started` of the run's sandbox steps. */
const sandboxExecs = (es: RunEvent[]) =>
  es.filter((e) => e.type === "step_started" && e.step === "build").length;
const byPath = (steps: Step[], path: string) => steps.filter((s) => s.path === path);

Deno.test("reruns: retry after a fix costs no model call and no sandbox exec; fork reuses earlier outputs; eval reads the recorded data", async () => {
  const home = await tempHome();
  const model = startModelServer();
  let n = 0;
  model.route(() => ({ text: `answer ${++n}` }));
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n${SANDBOX_CONFIG}`,
  );
  const agents = home.path("environments", "default", "agents");
  Deno.mkdirSync(agents, { recursive: true });
  for (const name of ["Planner", "Writer"]) Deno.writeTextFileSync(`${agents}/${name}.prompt`, PLAIN_PROMPT);
  const serve = await startServe({ env: home.env, home: home.home });
  try {
    const client = new StationClient(serve.url);
    await syncWorkflows(client);
    assertEquals((await saveWorkflow(client, broken)).version, 1);
    const started = await startRun(client, { workflow_id: "repairable", input });
    const failed = (await waitForRun(client, started.id, { timeoutMs: 60_000 }))!;
    assertEquals([failed.status, failed.error?.step, failed.error?.code], [
      "failed",
      "total",
      "expression_failed",
    ]);
    assertEquals(model.requests.length, 2);
    assertEquals(sandboxExecs(await events(client, started.id)), 1);

    // eval against what `total` saw: the value, and a syntax error with its position.
    const env = home.env;
    const value = await runStn([
      "workflow",
      "eval",
      "$sum(items.price)",
      "--run",
      started.id,
      "--step",
      "total",
    ], { env });
    assertEquals([value.code, value.stdout.trim()], [0, "10"], value.stderr);
    const seen = await runStn([
      "workflow",
      "debug-expression",
      "write.response",
      "--run",
      started.id,
      "--step",
      "total",
    ], {
      env,
    });
    assertEquals(JSON.parse(seen.stdout), "answer 2", seen.stderr);
    const bad = await runStn(
      ["workflow", "eval", "$sum(items.price", "--run", started.id, "--step", "total"],
      { env },
    );
    assertEquals(bad.code, 1);
    assertStringIncludes(bad.stderr, "at position 16");
    assertStringIncludes(bad.stderr, `  $sum(items.price\n                  ^`);

    // A definition that drops a completed step is refused; the fixed one completes the same run.
    const dropped = { ...fixed, states: fixed.states.slice(1) };
    Deno.writeTextFileSync(home.path("dropped.workflow.json"), JSON.stringify(dropped));
    const refused = await runStn([
      "workflow",
      "retry",
      started.id,
      "--from-definition",
      home.path("dropped.workflow.json"),
    ], {
      env,
    });
    assertEquals(refused.code, 1, refused.stdout);
    assertStringIncludes(
      refused.stderr,
      "step plan completed, but the definition has no top-level step plan",
    );
    assertEquals((await saveWorkflow(client, fixed)).version, 2);
    const retried = await runStn(["workflow", "retry", started.id, "--wait", "--json"], { env });
    assertEquals(retried.code, 0, retried.stderr);
    const run = JSON.parse(retried.stdout);
    assertEquals([run.id, run.status, run.result, run.workflow_version], [started.id, "completed", {
      total: 10,
    }, 2]);
    assertEquals(model.requests.length, 2, "a retry makes no model call");
    const log = await events(client, started.id);
    assertEquals(sandboxExecs(log), 1, "a retry runs no sandbox again");
    assertEquals(log.filter((e) => e.type === "run_retried").length, 1);
    const steps = await runSteps(client, started.id);
    for (const path of ["plan", "write", "build"]) {
      assertEquals(byPath(steps, path).map((s) => s.status), ["completed"], path);
    }
    assertEquals(byPath(steps, "total").map((s) => [s.status, s.visit]), [["failed", 1], ["completed", 2]]);
    const again = await runStn(["workflow", "retry", started.id], { env });
    assertEquals(again.code, 1);
    assertStringIncludes(again.stderr, "only a failed or canceled run is retried");

    // Fork from the second agent step: only it and what follows run; plan's output is reused as recorded.
    const fork = await forkRun(client, started.id, { from: "write" });
    assertEquals([fork.parent_run_id, fork.forked_from], [started.id, "write"]);
    const forked = (await waitForRun(client, fork.id, { timeoutMs: 60_000 }))!;
    assertEquals([forked.status, forked.result], ["completed", { total: 10 }]);
    assertEquals(model.requests.length, 3, "the fork called the model for `write` only");
    const [parentPlan] = byPath(steps, "plan");
    const forkSteps = await runSteps(client, fork.id);
    const [plan] = byPath(forkSteps, "plan");
    assertEquals(JSON.stringify(plan.output), JSON.stringify(parentPlan.output));
    assertEquals([plan.reused, plan.reused_from], [true, {
      run_id: started.id,
      path: "plan",
      visit: 1,
      attempt: 1,
    }]);
    assertEquals(forkSteps.filter((s) => !s.reused).map((s) => s.path), ["write", "build", "total"]);
    const reusedEvent = (await events(client, fork.id)).find((e) =>
      e.type === "step_completed" && e.step === "plan"
    )!;
    assertEquals((reusedEvent.data as { reused?: boolean }).reused, true);
    const forkAgents = (await listAgentRuns(client, { workflow_run_id: fork.id })).runs;
    assertEquals(forkAgents.map((r) => r.agent), ["Writer"]);
    assertEquals((await getRun(client, started.id)).forks, [fork.id]);
    const inspect = await runStn(["workflow", "inspect", fork.id], { env });
    assertStringIncludes(inspect.stdout, `forked from: ${started.id} at write`);
    assertStringIncludes(inspect.stdout, `completed (reused from ${started.id})`);
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
