import { join } from "node:path";
import { startEval } from "../../src/client/evals.ts";
import { getRun, runEnded, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";

// Cost on a real station (API, ledger, scripted model): a dataset's max_cost stops a case's agent run with
// budget_exceeded before its next model call, and a workflow run's cost is the sum of its agent steps' runs.

const PRICES = "  prices:\n    openai/test-model: { input_per_million: 2, output_per_million: 8 }\n";
const USAGE = { input: 1_000, output: 200 }; // $0.0036 a call at those prices

const userOf = (r: ModelRequest) =>
  String(r.body.messages.find((m: { role: string }) => m.role === "user")?.content ?? "");

Deno.test("cost: a dataset's max_cost stops each case's run with budget_exceeded; a workflow run's cost sums its agent steps'", async () => {
  const model = startModelServer();
  // The parent asks its helper (a tool call), then would answer; the helper answers at once.
  model.route((r) =>
    userOf(r).includes("delegate")
      ? r.body.messages.some((m: { role: string }) => m.role === "tool")
        ? { text: "done", usage: USAGE }
        : { calls: [{ name: "__agent_helper", args: { task: "help" } }], usage: USAGE }
      : { text: "helped", usage: USAGE }
  );
  const home = await tempHome();
  const env = home.path("environments", "default");
  await Deno.mkdir(join(env, "agents"), { recursive: true });
  await Deno.mkdir(join(env, "workflows"), { recursive: true });
  const prompt = (extra: string) =>
    `---\nmodel: openai/test-model\n${extra}---\n{{role "system"}}\nWork.\n{{role "user"}}\n{{userInput}}\n`;
  await Deno.writeTextFile(join(env, "agents", "Boss.prompt"), prompt("agents: [Helper]\n"));
  await Deno.writeTextFile(join(env, "agents", "Helper.prompt"), prompt(""));
  await Deno.writeTextFile(
    join(env, "workflows", "team.workflow.yaml"),
    "id: team\nstates:\n  - id: boss\n    type: agent\n    agent: Boss\n    task: delegate this\n",
  );
  const t = await startTestStation({
    home,
    configYaml:
      `ai:\n  provider: openai\n  model: test-model\n  base_url: ${model.url}\n  api_key: sk-test\n` +
      PRICES + "sandbox:\n  enabled: false\n",
  });
  try {
    const evalRun = await startEval(t.client, {
      target: "Boss",
      dataset: { max_cost: 0.003, cases: [{ id: "c1", task: "delegate this" }] },
    }, { wait: true });
    const [c] = evalRun.cases!;
    // The parent's first call cost $0.0036 > $0.003: its helper answered (the turn's tool call), no third call.
    assertEquals([c.status, c.error?.code], ["error", "budget_exceeded"]);
    assertMatch(c.error!.message, /past its budget max_cost \$0\.003/);
    assertEquals(model.requests.length, 2);
    // The case's cost is its own run's ($0.0036, no judge); the helper's run has its own.
    assert(Math.abs(c.cost_usd! - 0.0036) < 1e-12, `${c.cost_usd}`);

    // Without a budget the workflow's agent step delegates and answers: three calls, all its agent runs summed.
    const run = await startRun(t.client, { workflow_id: "team", input: {} });
    assert(await waitFor(async () => runEnded(await getRun(t.client, run.run_id)), 30_000), "the run ended");
    const ended = await getRun(t.client, run.run_id);
    assertEquals(ended.status, "completed");
    assert(Math.abs(ended.cost_usd! - 3 * 0.0036) < 1e-12, `the workflow run's cost: ${ended.cost_usd}`);
  } finally {
    await t.close();
    await model.close();
    await home.cleanup();
  }
});
