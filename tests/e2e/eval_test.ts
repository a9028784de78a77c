import { StationClient } from "../../src/client/http.ts";
import { getEval, startEval } from "../../src/client/evals.ts";
import type { EvalRun } from "../../src/contract/evals.ts";
import { listAgentRuns } from "../../src/client/agent_runs.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, type Reply, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { stdioServerEntry } from "../helpers/mcp_stdio_server.ts";

/** A station home with the scripted model as ai.base_url, an agent and optional workflows. */
async function homeWith(modelUrl: string, files: Record<string, string> = {}) {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  model: test-model\n  base_url: ${modelUrl}\n  api_key: sk-test\n` +
      "sandbox:\n  enabled: false\n",
  );
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.mkdirSync(`${env}/workflows`, { recursive: true });
  Deno.writeTextFileSync(
    `${env}/agents/Answerer.prompt`,
    '---\nmodel: openai/test-model\nmax_steps: 3\n---\n{{role "system"}}\nYou answer questions.\n' +
      '{{role "user"}}\n{{userInput}}\n',
  );
  for (const [path, text] of Object.entries(files)) Deno.writeTextFileSync(`${env}/${path}`, text);
  return home;
}

const systemOf = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");
const isJudge = (r: ModelRequest) => systemOf(r).includes("impartial evaluator");
const userOf = (r: ModelRequest) =>
  String(r.body.messages.find((m: { role: string }) => m.role === "user")?.content ?? "");
/** The question of an agent request (its task), or of the judge's (the task it scores). */
const questionOf = (r: ModelRequest) => /q(\d+)\?/.exec(userOf(r))?.[1];

function dataset(n: number, rubric = true): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `c${i + 1}`,
      task: `what is q${i + 1}?`,
      expected: `answer ${i + 1}`,
      ...(rubric ? { rubric: "the answer names the number asked for" } : {}),
    })).join("\n") + "\n";
}

Deno.test("e2e: stn eval run — 20 cases at concurrency 5, each an agent run; the judge's scores and reasoning, a malformed judge answer a scored error", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url);
  const file = home.path("qa.jsonl");
  Deno.writeTextFileSync(file, dataset(20));
  // Agent calls are held until five are in flight, then all five answer: the eval must reach 5 at once, never 6.
  let inflight = 0, most = 0;
  let held: Array<() => void> = [];
  model.route((r) => {
    const q = questionOf(r)!;
    if (isJudge(r)) {
      if (q === "7") return { text: "I think it is fine" }; // malformed: no JSON
      return { text: JSON.stringify({ score: q === "3" ? 0.2 : 0.9, reasoning: `judged q${q}` }) };
    }
    inflight++;
    most = Math.max(most, inflight);
    const hold = new Promise<void>((res) => held.push(res));
    if (held.length === 5) {
      const batch = held;
      held = [];
      inflight -= 5;
      batch.forEach((f) => f());
    }
    return { text: `answer ${q}`, hold, usage: { input: 10, output: 3 } } satisfies Reply;
  });
  const serve = await startServe({ env: home.env, home: home.home });
  try {
    const run = await runStn(["eval", "run", "Answerer", "--dataset", file, "--concurrency", "5", "--json"], {
      env: home.env,
    });
    assertEquals(run.code, 0, run.stderr);
    const out: EvalRun = JSON.parse(run.stdout);
    const cases = out.cases!;
    assertEquals(most, 5, "five agent calls in flight at once, never more");
    assertEquals([out.status, out.cases_total, out.cases_done, out.kind], ["completed", 20, 20, "agent"]);
    assert(out.eval_id.startsWith("eval_"));
    // Tokens: each case's run (10 in + 3 out), plus the judge's calls, recorded with their scores.
    const judged = cases.flatMap((c) => c.scores.flatMap((s) => s.judge ? [s.judge.total_tokens] : []));
    assertEquals(judged.length, 20);
    assertEquals(cases.map((c) => c.total_tokens), Array(20).fill(13));
    assertEquals(out.total_tokens, 20 * 13 + judged.reduce((a, b) => a + b, 0));
    const byId = new Map(cases.map((c) => [c.case_id, c]));
    // Every case: its own agent run, visible in the agent runs like any other.
    const runIds = cases.map((c) => c.run_id);
    assertEquals(new Set(runIds).size, 20);
    const listed =
      (await listAgentRuns(new StationClient(serve.url), { agent: "Answerer", limit: 100 })).runs;
    assertEquals(new Set(listed.map((r) => r.run_id)), new Set(runIds));
    // The judge's score and reasoning come from its answers; q7's malformed answer is that case's error.
    const judgeOf = (id: string) => byId.get(id)!.scores.find((s) => s.scorer === "judge")!;
    assertEquals([judgeOf("c1").score, judgeOf("c1").reasoning, judgeOf("c1").passed], [
      0.9,
      "judged q1",
      true,
    ]);
    assertEquals(judgeOf("c1").judge?.answer, JSON.stringify({ score: 0.9, reasoning: "judged q1" }));
    assertEquals([judgeOf("c3").score, judgeOf("c3").passed, byId.get("c3")!.status], [0.2, false, "failed"]);
    assertEquals(
      [judgeOf("c7").error?.code, judgeOf("c7").judge?.answer, byId.get("c7")!.status],
      ["eval_judge_invalid", "I think it is fine", "error"],
    );
    const a = out.aggregates;
    assertEquals([a.cases, a.passed, a.failed, a.errors], [20, 18, 1, 1]);
    const judge = a.scorers.find((s) => s.scorer === "judge")!;
    assertEquals([judge.count, judge.errors, judge.p50], [19, 1, 0.9]);
    const expected = a.scorers.find((s) => s.scorer === "expected")!;
    assertEquals([expected.mean, expected.pass_rate], [1, 1]);

    const show = await runStn(["eval", "show", out.eval_id], { env: home.env });
    assertEquals(show.code, 0, show.stderr);
    assertStringIncludes(show.stdout, "eval_judge_invalid");
    const list = await runStn(["eval", "list", "--json"], { env: home.env });
    assertEquals(JSON.parse(list.stdout).evals.map((e: { eval_id: string }) => e.eval_id), [out.eval_id]);
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("e2e: kill -9 of stn serve mid-eval; after restart the eval completes and no finished case's model calls are sent again", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url);
  let killed = false;
  model.route((r) => {
    const q = Number(questionOf(r));
    if (isJudge(r)) return { text: JSON.stringify({ score: 1, reasoning: "ok" }) };
    // Cases 1 and 2 answer at once; later ones hang until the station has been killed.
    return q <= 2 || killed ? { text: `answer ${q}` } : { text: "late", hold: new Promise(() => {}) };
  });
  let serve = await startServe({ env: home.env, home: home.home });
  try {
    const client = new StationClient(serve.url);
    const { parseDataset } = await import("../../src/evals/dataset.ts");
    const started = await startEval(client, {
      target: "Answerer",
      dataset: parseDataset(dataset(5), "qa.jsonl"),
      concurrency: 2,
    });
    // Cases 1 and 2 scored, 3 and 4 in flight (held).
    assert(
      await waitFor(async () => {
        const e = await getEval(client, started.eval_id);
        return e.cases_done === 2 && model.requests.filter((r) => !isJudge(r)).length === 4;
      }, 30_000),
      "two cases ended and two more are running",
    );
    killed = true;
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    const sent = (q: string) => model.requests.filter((r) => questionOf(r) === q).length;
    assertEquals([sent("1"), sent("2")], [2, 2], "each finished case: its agent call and its judge call");

    serve = await startServe({ env: home.env, home: home.home });
    const again = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await getEval(again, started.eval_id)).status !== "running", 30_000),
      "the eval resumed and ended",
    );
    const ended = await getEval(again, started.eval_id);
    assertEquals([ended.status, ended.cases_done, ended.aggregates.passed], ["completed", 5, 5]);
    assertEquals([sent("1"), sent("2")], [2, 2], "no finished case's model calls were sent again");
    assertEquals(
      [sent("3"), sent("4"), sent("5")],
      [3, 3, 2],
      "the interrupted calls ran again; case 5 once",
    );
    // The interrupted cases kept the runs they had: resumed, not started anew.
    assertEquals(new Set(ended.cases!.map((c) => c.run_id)).size, 5);
    const runs = (await listAgentRuns(again, { agent: "Answerer" })).runs;
    assertEquals(runs.length, 5);
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("e2e: --baseline with a worse-answering model exits 1 naming the regressed cases; compare; a workflow eval; generate", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url, {
    "workflows/ask.workflow.yaml":
      "id: ask\nstates:\n  - id: answer\n    type: agent\n    agent: Answerer\n" +
      "    task: ${q}\n",
  });
  const file = home.path("qa.jsonl");
  Deno.writeTextFileSync(file, dataset(4, false));
  let worse = false;
  model.route((r) => {
    if (systemOf(r).includes("evaluation datasets")) {
      return {
        text:
          '```json\n[{"id": "e1", "task": "q1?"}, {"task": "q2?", "rubric": "says 2"}, {"bogus": 1}]\n```',
      };
    }
    const q = Number(questionOf(r));
    return { text: worse && q % 2 === 0 ? "no idea" : `answer ${q}` };
  });
  const serve = await startServe({ env: home.env, home: home.home });
  const stn = (...args: string[]) => runStn(args, { env: home.env });
  try {
    const base = await stn("eval", "run", "Answerer", "--dataset", file, "--json");
    assertEquals(base.code, 0, base.stderr);
    const baseId = JSON.parse(base.stdout).eval_id;
    const same = await stn("eval", "run", "Answerer", "--dataset", file, "--baseline", baseId, "--json");
    assertEquals(same.code, 0, same.stderr);
    assertEquals(JSON.parse(same.stdout).baseline.compare.regressed, false);

    worse = true;
    const gated = await stn(
      "eval",
      "run",
      "Answerer",
      "--dataset",
      file,
      "--baseline",
      baseId,
      "--max-regression",
      "0.05",
      "--json",
    );
    assertEquals(gated.code, 1, gated.stderr);
    assertStringIncludes(gated.stderr, "cases that got worse: c2, c4");
    const err = JSON.parse(gated.stdout).error;
    assertEquals(err.code, "eval_regressed");
    assertEquals(err.details.baseline.compare.regressed_cases, ["c2", "c4"]);
    const headId = err.details.eval_id;

    const compare = await stn("eval", "compare", baseId, headId, "--json");
    assertEquals(compare.code, 1);
    const c = JSON.parse(compare.stdout).error.details;
    assertEquals([c.pass_rate.base, c.pass_rate.head, c.regressed_cases], [1, 0.5, ["c2", "c4"]]);
    assertEquals(c.scorers.find((s: { scorer: string }) => s.scorer === "expected").delta, -0.5);
    const loose = await stn("eval", "compare", baseId, headId, "--max-regression", "0.6");
    assertEquals(loose.code, 0, loose.stderr);
    assertStringIncludes(loose.stdout, "pass rate 100% → 50%");

    // A workflow eval: each case a workflow run, its output scored with JSONata.
    const wfData = home.path("wf.jsonl");
    Deno.writeTextFileSync(
      wfData,
      JSON.stringify({
        id: "w1",
        input: { q: "q1?" },
        expected: { jsonata: '$contains(answer, "answer 1")' },
      }) +
        "\n",
    );
    const wf = await stn("eval", "run", "ask", "--dataset", wfData, "--json");
    assertEquals(wf.code, 0, wf.stderr);
    const w = JSON.parse(wf.stdout);
    assertEquals([w.kind, w.cases[0].status, w.cases[0].total_tokens > 0], ["workflow", "passed", true]);
    const wfRun = await (await fetch(`${serve.url}/api/v1/workflow-runs/${w.cases[0].run_id}`)).json();
    assertEquals([wfRun.workflow_id, wfRun.status], ["ask", "completed"]);

    // Bad input: a clear error, nothing started.
    const missing = await stn("eval", "run", "Nobody", "--dataset", file);
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, "no agent or workflow Nobody");
    Deno.writeTextFileSync(home.path("bad.jsonl"), '{"task": "x"}\n{"task": 3}\n');
    const bad = await stn("eval", "run", "Answerer", "--dataset", home.path("bad.jsonl"));
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "line 2");

    // generate: the model's cases, the invalid one left out, written as a file to review; never over a file.
    const gen = await stn("eval", "generate", "Answerer", "--count", "3", "--strategy", "edge_cases");
    assertEquals(gen.code, 0, gen.stderr);
    const path = home.path("environments", "default", "evals", "Answerer.edge_cases.jsonl");
    assertStringIncludes(gen.stdout, `wrote 2 case(s) to ${path} (1 invalid left out)`);
    const lines = Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(lines, [{ id: "e1", task: "q1?" }, { id: "edge_cases-2", task: "q2?", rubric: "says 2" }]);
    const generatePrompt = model.requests.find((r) => systemOf(r).includes("evaluation datasets"))!;
    assertStringIncludes(userOf(generatePrompt), "You answer questions.");
    const again = await stn("eval", "generate", "Answerer", "--strategy", "edge_cases");
    assertEquals(again.code, 2);
    assertStringIncludes(again.stderr, "exists");
    const listed = await stn("eval", "datasets", "--json");
    assertEquals(
      JSON.parse(listed.stdout).datasets.map((d: { name: string; cases: number }) => [d.name, d.cases]),
      [
        ["Answerer.edge_cases.jsonl", 2],
      ],
    );
    // A dataset of the environment by name (read by the station).
    const byName = await stn("eval", "run", "Answerer", "--dataset", "Answerer.edge_cases.jsonl", "--json");
    assertEquals(byName.code, 0, byName.stderr);
    assertEquals(JSON.parse(byName.stdout).dataset, {
      name: "Answerer.edge_cases",
      path: "Answerer.edge_cases.jsonl",
      cases: 2,
    });
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("e2e: a dataset's mocks answer the agent's MCP tools, the unmocked ones stay live; tool scorer and tool effectiveness", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url, {
    "agents/Lookup.prompt":
      '---\nmodel: openai/test-model\ntools: ["__echo", "__fail"]\nmax_steps: 3\n---\n' +
      '{{role "system"}}\nYou look things up.\n{{role "user"}}\n{{userInput}}\n',
  });
  const callLog = home.path("calls.log");
  Deno.mkdirSync(home.path("environments", "default", "mcp-configs"));
  Deno.writeTextFileSync(
    home.path("environments", "default", "mcp-configs", "servers.json"),
    JSON.stringify({ mcpServers: { local: stdioServerEntry({ env: { MCP_TEST_CALL_LOG: callLog } }) } }),
  );
  model.route((r) => {
    const results = r.body.messages.filter((m: { role: string }) => m.role === "tool");
    if (results.length) {
      return { text: `found: ${results.map((m: { content: string }) => m.content).join(" | ")}` };
    }
    return { calls: [{ name: "__echo", args: { text: "live?" } }, { name: "__fail", args: {} }] };
  });
  Deno.writeTextFileSync(
    home.path("lookup.yaml"),
    "mocks:\n  __echo: { result: mocked-echo }\ntools: { required: [__echo], forbidden: [__nope] }\n" +
      "cases:\n  - { id: one, task: find it, expected: { contains: mocked-echo } }\n",
  );
  const serve = await startServe({ env: home.env, home: home.home, timeoutMs: 60_000 });
  const cli = { env: { ...home.env, STATION_URL: serve.url } };
  try {
    const sync = await runStn(["sync", "--trust"], cli);
    assertEquals(sync.code, 0, sync.stderr);
    const ran = await runStn(["eval", "run", "Lookup", "--dataset", home.path("lookup.yaml"), "--json"], cli);
    assertEquals(ran.code, 0, ran.stderr);
    const out: EvalRun = JSON.parse(ran.stdout);
    const c = out.cases![0];
    assertEquals(c.status, "passed", JSON.stringify(c));
    assertEquals(c.tool_calls.map((t) => [t.name, t.status]), [["__echo", "completed"], [
      "__fail",
      "failed",
    ]]);
    // The mocked tool never reached the server; the unmocked one did.
    const logged = Deno.readTextFileSync(callLog).trim().split("\n").map((l) => l.split(" ")[0]);
    assertEquals(logged, ["fail"]);
    assertEquals(c.scores.find((s) => s.scorer === "tools")!.score, 1);
    assertEquals(out.aggregates.tools.map((t) => [t.tool, t.calls, t.success_rate, t.errors.length]), [
      ["__echo", 1, 1, 0],
      ["__fail", 1, 0, 1],
    ]);
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
