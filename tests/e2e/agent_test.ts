import { StationClient } from "../../src/client/http.ts";
import { agentRunEvents, cancelAgentRun, getAgentRun, startAgentRun } from "../../src/client/agent_runs.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

const agentFile = (system: string, extra = "") =>
  `---
model: openai/test-model
max_steps: 3
${extra}---
{{role "system"}}
${system}
{{role "user"}}
{{userInput}}
`;

async function homeWith(modelUrl: string, agents: Record<string, string>) {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${modelUrl}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(agents)) Deno.writeTextFileSync(`${dir}/${name}.prompt`, text);
  return home;
}

const systemOf = (r: ModelRequest) => String(r.body.messages[0]?.content ?? "");

Deno.test("e2e: stn agent run / runs / inspect and the agent-runs API through a real stn serve", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url, {
    Greeter: agentFile("You greet."),
    Looper: agentFile("You loop.", "agents: [Greeter]\n"),
  });
  const serve = await startServe({ env: { ...home.env, STATION_DEBUG: "1" }, home: home.home });
  try {
    model.script({ text: "Hello, Ada!", usage: { input: 11, output: 4 } });
    const ok = await runStn(["agent", "run", "Greeter", "greet Ada", "--follow"], { env: home.env });
    assertEquals(ok.code, 0, ok.stderr);
    assertEquals(ok.stdout.trim(), "Hello, Ada!");
    assertStringIncludes(ok.stderr, "turn 1: 11 in / 4 out");
    // STATION_DEBUG=1: the server logs each turn on stderr.
    assertMatch(
      serve.stderr(),
      /\[agent arun_\S+\] turn 1 model=openai\/test-model tokens in=11 out=4 cached=0 tools=-/,
    );

    // max_steps without an answer: exit 3, the run still recorded.
    model.route((r) =>
      systemOf(r).includes("You loop")
        ? { calls: [{ name: "__agent_greeter", args: { task: "again" } }] }
        : { text: "hi again" }
    );
    const capped = await runStn(["agent", "run", "Looper", "loop forever", "--json"], { env: home.env });
    assertEquals(capped.code, 3, capped.stderr);
    const body = JSON.parse(capped.stdout);
    assertEquals([body.error.code, body.error.details.finish_reason], ["agent_max_steps", "max_steps"]);
    assertEquals(body.error.details.tool_calls.length, 3);

    const list = await runStn(["agent", "runs", "--agent", "Looper", "--json"], { env: home.env });
    assertEquals(JSON.parse(list.stdout).runs.map((r: { run_id: string }) => r.run_id), [
      body.error.details.run_id,
    ]);
    const inspect = await runStn(["agent", "inspect", body.error.details.run_id], { env: home.env });
    assertEquals(inspect.code, 0, inspect.stderr);
    assertStringIncludes(inspect.stdout, "__agent_greeter");
    assertStringIncludes(inspect.stdout, "completed (max_steps)");

    // The API: ?wait=1, the events stream resumed after a seq, cancel of an ended run.
    const client = new StationClient(serve.url);
    const run = await startAgentRun(client, "Greeter", { task: "greet Bob" }, { wait: true });
    assertEquals([run.status, run.response, run.history?.length], ["completed", "hi again", 1]);
    const traced = await (await fetch(`${serve.url}/api/v1/agents/Greeter/runs?wait=1`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      },
      body: JSON.stringify({ task: "traced" }),
    })).json();
    assertEquals([traced.status, traced.trace_id], ["completed", "0af7651916cd43dd8448eb211c80319c"]);
    const all = [];
    for await (const e of agentRunEvents(client, run.run_id)) all.push(e.type);
    assertEquals(all, ["run_started", "turn_started", "model_responded", "run_completed"]);
    const rest = [];
    for await (const e of agentRunEvents(client, run.run_id, { after: 2 })) rest.push(e.seq);
    assertEquals(rest, [3, 4]);
    const none = [];
    for await (const e of agentRunEvents(client, run.run_id, { after: "now" })) none.push(e.seq);
    assertEquals(none, []);
    const badCursor = await client.fetch("GET", `/api/v1/agent-runs/${run.run_id}/events`, {
      headers: { "last-event-id": "x" },
    }).catch((e) => e);
    assertEquals([badCursor.status, badCursor.code], [400, "invalid_cursor"]);
    const res = await cancelAgentRun(client, run.run_id).catch((e) => e);
    assertEquals(res.code, "agent_run_finished");
    // A workflow's agent step: its run, usage and tool calls show in `stn workflow inspect`.
    const wf = home.path("ask.workflow.yaml");
    Deno.writeTextFileSync(
      wf,
      "id: ask\nstates:\n  - id: loop\n    type: agent\n    agent: Looper\n    task: ${q}\n",
    );
    const wfRun = await runStn(["workflow", "run", wf, "--input", '{"q": "go"}', "--wait", "--json"], {
      env: home.env,
    });
    // The agent used its turns without an answer: the step, and so the run, failed (exit 3).
    assertEquals(wfRun.code, 3, wfRun.stderr);
    assertStringIncludes(wfRun.stderr, "the agent used its 3 turns (max_steps)");
    const wfId = /run (\S+) started/.exec(wfRun.stderr)![1];
    const wfInspect = await runStn(["workflow", "inspect", wfId], { env: home.env });
    assertStringIncludes(wfInspect.stdout, "AGENT RUN");
    assertMatch(
      wfInspect.stdout,
      /arun_\S+ +loop +Looper +completed \(max_steps\) +3 +\d+\/\d+ +\S+ +__agent_greeter/,
    );

    const missing = await runStn(["agent", "run", "Nobody", "x"], { env: home.env });
    assertEquals(missing.code, 1);
    assertStringIncludes(
      missing.stderr,
      "no agent `Nobody` in environment `default` (no file agents/Nobody.prompt)",
    );
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});

Deno.test("e2e: kill -9 of stn serve mid-run; after restart the run resumes — no finished model call or tool call repeated", async () => {
  const model = startModelServer();
  const home = await homeWith(model.url, {
    Boss: agentFile("You are the boss.", "agents: [WorkerA, WorkerB]\n"),
    WorkerA: agentFile("You are worker A."),
    WorkerB: agentFile("You are worker B."),
  });
  let killed = false;
  model.route((r) => {
    const system = systemOf(r);
    if (system.includes("worker A")) return { text: "A done" };
    if (system.includes("worker B")) return killed ? { text: "B done" } : { hold: new Promise(() => {}) };
    const results = r.body.messages.filter((m: { role: string }) => m.role === "tool");
    if (results.length === 0) {
      return {
        calls: [{ name: "__agent_workera", args: { task: "part A" } }, {
          name: "__agent_workerb",
          args: { task: "part B" },
        }],
      };
    }
    return { text: `final: ${results.map((m: { content: string }) => m.content).join(" + ")}` };
  });
  let serve = await startServe({ env: home.env, home: home.home });
  try {
    const started = await startAgentRun(new StationClient(serve.url), "Boss", { task: "split the work" });
    assert(
      await waitFor(() => model.requests.some((r) => systemOf(r).includes("worker B")), 15_000),
      "worker B's model call arrived",
    );
    killed = true;
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    const before = model.requests.length;
    assertEquals(before, 3, "boss turn 1, worker A, worker B (held)");

    serve = await startServe({ env: home.env, home: home.home });
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await getAgentRun(client, started.run_id)).status !== "running", 20_000),
    );
    const run = await getAgentRun(client, started.run_id);
    assertEquals([run.status, run.response, run.turns], ["completed", "final: A done + B done", 2]);
    const count = (who: string) => model.requests.filter((r) => systemOf(r).includes(who)).length;
    assertEquals(count("the boss"), 2, "boss turn 1 was not sent again (only turn 2 after the restart)");
    assertEquals(count("worker A"), 1, "worker A's finished tool call was not repeated");
    assertEquals(count("worker B"), 2, "worker B's interrupted call ran again");
    assertEquals(run.tool_calls.map((c) => [c.name, c.status]), [
      ["__agent_workera", "completed"],
      ["__agent_workerb", "completed"],
    ]);
    const types = [];
    for await (const e of agentRunEvents(client, run.run_id)) types.push(e.type);
    assert(types.includes("run_resumed"), types.join());
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
