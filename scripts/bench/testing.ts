/**
 * `stn test` benchmark: a suite of 50 cassette-backed agent cases (each one tool call, then an answer) and 20
 * workflow cases (a switch and an approval, decided by the case), its tool mocked, wall time of the whole `stn test` process
 * including its station's start, against a baseline in the same run: the same 70 runs made as plain runs
 * on a `stn serve` started for them, its agents answered by the tests' scripted model server and the tool by
 * the tests' stdio MCP server (started per run, as a run does), from the spawn
 * of the server to the last run's end. Also the skipped-time figure: one case with a 24 h timer and an
 * approval that times out after 72 h, its wall time (`stn test --json` duration) against the time it skipped.
 *
 *   deno run -A scripts/bench/testing.ts [agent cases=50] [workflow cases=20]
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mapLimit } from "../../src/lib/async.ts";
import { readServerFile } from "../../src/config/server_file.ts";
import { stdioServerEntry } from "../../tests/helpers/mcp_stdio_server.ts";
import { type ModelRequest, startModelServer } from "../../tests/helpers/model_server.ts";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tableRow } from "./table.ts";

const AGENT_CASES = Number(Deno.args[0] ?? 50);
const WORKFLOW_CASES = Number(Deno.args[1] ?? 20);
const PARALLEL = 2;
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const AGENT = '---\ntools: ["__echo"]\n---\n{{role "system"}}\nLook the city up, then answer in one line.\n' +
  '{{role "user"}}\n{{userInput}}\n';
const FLOW = `id: route
inputSchema: { type: object, properties: { n: { type: number } } }
states:
  - id: pick
    type: switch
    conditions:
      - if: $.workflow.input.n > 10
        next: ask
    defaultNext: small
  - id: ask
    type: human_approval
    message: ship it?
    timeout: 1h
    onReject: small
    next: big
  - id: big
    type: inject
    data: { size: big }
    end: true
  - id: small
    type: inject
    data: { size: small }
    end: true
`;
const SLOW = `id: slow
states:
  - { id: wait-a-day, type: timer, duration: 24h, next: ask }
  - { id: ask, type: human_approval, message: still wanted?, timeout: 72h, onTimeout: late, next: done }
  - { id: done, type: inject, data: { answer: approved }, end: true }
  - { id: late, type: inject, data: { answer: timed out }, end: true }
`;
const MOCK = `mocks:\n      __echo: { expr: '"sunny in " & $args.text' }`;

/** The scripted model: look the city up, then answer with what the tool said. */
function lookUp(r: ModelRequest) {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const tool = messages.find((m) => m.role === "tool");
  if (tool) return { text: `The weather: ${JSON.stringify(tool.content)}` };
  return { calls: [{ name: "__echo", args: { text: "Oslo" } }] };
}

function agentCase(i: number): string {
  return `  - name: agent ${i}\n    agent: bench\n    task: weather in Oslo\n    model: { cassette: cassettes/bench.yaml }\n` +
    `    ${MOCK}\n    expect:\n      output: '$contains($, "sunny in Oslo")'\n`;
}

function workflowCase(i: number): string {
  const big = i % 2 === 0;
  return `  - name: workflow ${i}\n    workflow: route\n    input: { n: ${big ? 20 : 1} }\n` +
    (big ? `    approvals: { ask: { decision: approve } }\n` : "") +
    `    expect: { output: { size: ${big ? "big" : "small"} } }\n`;
}

const stn = (home: string, args: string[], extra: Record<string, string> = {}) =>
  new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, MAIN, ...args],
    env: {
      ...Deno.env.toObject(),
      STATION_HOME: home,
      NO_COLOR: "1",
      STN_SERVER_MCP_PORT: "0",
      STN_SERVER_AGENT_PORT: "0",
      ...extra,
    },
    cwd: join(home, "environments", "default"),
    stdout: "piped",
    stderr: "piped",
  });

async function run(home: string, args: string[], extra: Record<string, string> = {}) {
  const out = await stn(home, args, extra).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    // A failed suite: name its failing cases rather than print the whole report.
    const report = (() => {
      try {
        return JSON.parse(text);
      } catch {
        return {};
      }
    })();
    const failed = (report.error?.details?.cases ?? [])
      .filter((c: { status: string }) => c.status === "failed")
      .map((c: { name: string; failures: unknown }) => `${c.name}: ${JSON.stringify(c.failures)}`);
    throw new Error(
      `stn ${args.join(" ")} exited ${out.code}:\n${failed.join("\n") || text}\n${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
  return text;
}

const model = startModelServer();
model.route(lookUp);
const home = await Deno.makeTempDir({ prefix: "stn-bench-testing-" });
try {
  const env = join(home, "environments", "default");
  for (const d of ["agents", "workflows", "tests"]) await Deno.mkdir(join(env, d), { recursive: true });
  await Deno.writeTextFile(join(env, "agents", "bench.prompt"), AGENT);
  await Deno.writeTextFile(join(env, "workflows", "route.workflow.yaml"), FLOW);
  await Deno.writeTextFile(join(env, "workflows", "slow.workflow.yaml"), SLOW);
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-bench\n`,
  );

  // The tool is the tests' stdio MCP server's `echo`, synced and approved as a user would; stn test mocks it.
  await Deno.mkdir(join(env, "mcp-configs"));
  await Deno.writeTextFile(
    join(env, "mcp-configs", "servers.json"),
    JSON.stringify({ mcpServers: { local: stdioServerEntry() } }),
  );
  await run(home, ["sync", "--trust"]);
  // Record the cassette once: one case, --update against the scripted model.
  await Deno.writeTextFile(join(env, "tests", "record.test.yaml"), `cases:\n${agentCase(0)}`);
  await run(home, ["test", "--update", "tests/record.test.yaml"], {}).catch((e) => {
    throw new Error(`recording the bench cassette failed: ${e.message}`);
  });
  await Deno.remove(join(env, "tests", "record.test.yaml"));
  const cases = [
    ...Array.from({ length: AGENT_CASES }, (_, i) => agentCase(i + 1)),
    ...Array.from({ length: WORKFLOW_CASES }, (_, i) => workflowCase(i + 1)),
  ];
  await Deno.writeTextFile(join(env, "tests", "bench.test.yaml"), `cases:\n${cases.join("")}`);
  await Deno.writeTextFile(
    join(env, "tests", "slow.test.yaml"),
    "cases:\n  - name: a day, then three days of approval\n    workflow: slow\n" +
      "    approvals: { ask: { decision: timeout } }\n    expect: { steps: [wait-a-day, ask, late] }\n",
  );

  // stn test, offline: nothing answers at the model's address.
  const offline = { STN_AI_BASE_URL: "http://127.0.0.1:9/v1" };
  const t0 = performance.now();
  const report = JSON.parse(
    await run(home, ["--json", "test", "--parallel", String(PARALLEL), "tests/bench.test.yaml"], offline),
  );
  const suiteMs = performance.now() - t0;
  if (report.summary.passed !== cases.length) {
    throw new Error(`only ${report.summary.passed}/${cases.length} passed`);
  }

  const slow = JSON.parse(await run(home, ["--json", "test", "tests/slow.test.yaml"], offline)).cases[0];
  if (slow.status !== "passed") {
    throw new Error(`the skipped-time case failed: ${JSON.stringify(slow.failures)}`);
  }

  // Baseline: the same runs on a plain `stn serve`, the agents answered by the scripted model server.
  const b0 = performance.now();
  const serve = stn(home, ["serve", "--port", "0"]).spawn();
  let url: string | undefined;
  while (!url) {
    const info = readServerFile(join(home, "run", "server.json"));
    if (info?.pid === serve.pid) url = info.url;
    else await new Promise((r) => setTimeout(r, 20));
  }
  const post = (path: string, body: unknown) =>
    fetch(url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    })
      .then((r) => r.json());
  const jobs = [
    ...Array.from(
      { length: AGENT_CASES },
      () => () => post("/api/v1/agents/bench/runs?wait=1", { task: "weather in Oslo" }),
    ),
    ...Array.from({ length: WORKFLOW_CASES }, (_, i) => async () => {
      const r = await post("/api/v1/workflow-runs", {
        workflowId: "route",
        input: { n: i % 2 === 0 ? 20 : 1 },
      });
      for (;;) {
        const now = await (await fetch(`${url}/api/v1/workflow-runs/${r.id}`)).json();
        if (["completed", "failed", "canceled"].includes(now.status)) return now;
        const pending = await (await fetch(`${url}/api/v1/workflow-approvals?run_id=${r.id}&status=pending`))
          .json();
        for (const a of pending.approvals) await post(`/api/v1/workflow-approvals/${a.id}/approve`, {});
        await new Promise((res) => setTimeout(res, 5));
      }
    }),
  ];
  const results = await mapLimit(jobs, PARALLEL, (job) => job()) as Array<{ status: string }>;
  const baselineMs = performance.now() - b0;
  const completed = results.filter((r) => r.status === "completed").length;
  if (completed !== jobs.length) throw new Error(`baseline: only ${completed}/${jobs.length} runs completed`);
  serve.kill("SIGTERM");
  await serve.status;

  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(
    `stn test, ${AGENT_CASES} agent + ${WORKFLOW_CASES} workflow cases, --parallel ${PARALLEL}: ${
      s(suiteMs)
    }`,
  );
  console.log(`baseline, the same runs on stn serve with the scripted model: ${s(baselineMs)}`);
  console.log(
    `skipped time: 24 h timer + 72 h approval timeout in ${slow.duration_ms} ms of wall time (${
      (slow.clock_ms / 3_600_000).toFixed(1)
    } h on the station's clock)`,
  );
  tableRow({
    figure: `stn test, ${AGENT_CASES} cassette agent + ${WORKFLOW_CASES} workflow cases (with station start)`,
    value: s(suiteMs),
    baseline: `plain runs on stn serve ${s(baselineMs)}`,
    ratio: `×${(suiteMs / baselineMs).toFixed(2)}`,
    target: "≤ 10 s",
  });
  tableRow({
    figure: "stn test, 24 h timer + 72 h approval timeout (one case)",
    value: `${slow.duration_ms} ms`,
    baseline: `${(slow.clock_ms / 3_600_000).toFixed(0)} h skipped`,
    ratio: "—",
    target: "< 1 s",
  });
} finally {
  await Deno.remove(home, { recursive: true }).catch(() => {});
  await model.close();
}
