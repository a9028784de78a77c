import { join } from "node:path";
import { StationClient } from "../../src/client/http.ts";
import { getRun, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";
import { startServe, waitFor } from "../helpers/stn.ts";
import { PLAIN_PROMPT } from "../helpers/agents.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { startAgentRun } from "../../src/client/agent_runs.ts";

const tiny = { id: "tiny", states: [{ id: "one", type: "transform", expression: "{'n': n * 2}" }] };

Deno.test("logs: log.format json writes one object a line with request, run and step ids; an access line per request", async () => {
  const home = await tempHome();
  const serve = await startServe({
    env: { ...home.env, STN_LOG_FORMAT: "json", STN_LOG_LEVEL: "debug" },
    home: home.home,
  });
  try {
    const client = new StationClient(serve.url);
    await fetch(`${serve.url}/health`).then((r) => r.body?.cancel());
    const res = await fetch(`${serve.url}/api/v1/workflow-runs/nope`, {
      headers: { "x-request-id": "req-42" },
    });
    await res.body?.cancel();
    assertEquals(res.headers.get("x-request-id"), "req-42");
    const run = await startRun(client, { definition: tiny, input: { n: 2 } });
    assert(await waitFor(async () => (await getRun(client, run.id)).status === "completed"));
    await serve.stop();
    const lines = serve.stderr().trim().split("\n").map((l) => JSON.parse(l));
    for (const l of lines) assert(l.time && l.level && l.message, JSON.stringify(l));
    const access = lines.filter((l) => l.message === "request");
    const missing = access.find((l) => l.request_id === "req-42");
    assertEquals(
      { ...missing, time: undefined, ms: undefined },
      {
        time: undefined,
        level: "info",
        message: "request",
        request_id: "req-42",
        method: "GET",
        path: "/api/v1/workflow-runs/nope",
        route: "/api/v1/workflow-runs/:run_id",
        status: 404,
        ms: undefined,
      },
    );
    const started = access.find((l) => l.method === "POST");
    assertEquals([started?.route, started?.status], ["/api/v1/workflow-runs", 201]);
    assert(/^[0-9a-f-]{36}$/.test(started?.request_id), "a request without an id gets one");
    // Health checks log at debug, not info, so probes do not flood the log.
    assertEquals(access.filter((l) => l.path === "/health").map((l) => l.level), ["debug"]);
    const step = lines.find((l) => l.message === "step attempt ran");
    assertEquals(
      [step?.run_id, step?.step, step?.type, step?.outcome],
      [run.id, "one", "transform", "completed"],
    );
  } finally {
    await serve.stop("SIGKILL").catch(() => {});
    await home.cleanup();
  }
});

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("metrics: a real Prometheus scrapes /metrics (with the API token) and its query API returns the run and agent counters", async () => {
  const token = "metrics-test-token-0123456789";
  const model = startModelServer();
  const home = await tempHome();
  Deno.mkdirSync(home.path("environments", "default", "agents"), { recursive: true });
  Deno.writeTextFileSync(home.path("environments", "default", "agents", "Counter.prompt"), PLAIN_PROMPT);
  const t = await startTestStation({
    home,
    configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${token}\n` +
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\n`,
  });
  const dir = await Deno.makeTempDir({ prefix: "stn-prom-" });
  let prometheus: Deno.ChildProcess | undefined;
  try {
    const port = new URL(t.station.url).port;
    const denied = await fetch(`http://127.0.0.1:${port}/metrics`);
    await denied.body?.cancel();
    assertEquals(denied.status, 401, "off loopback, /metrics needs the token like the API");

    const client = new StationClient(`http://127.0.0.1:${port}`, { token });
    const runs = await Promise.all(
      [1, 2, 3].map((n) => startRun(client, { definition: tiny, input: { n } })),
    );
    const failing = await startRun(client, {
      definition: { id: "boom", states: [{ id: "bad", type: "transform", expression: "$error('no')" }] },
      input: {},
    });
    assert(
      await waitFor(async () => {
        const all = await Promise.all([...runs, failing].map((r) => getRun(client, r.id)));
        return all.every((r) => ["completed", "failed"].includes(r.status));
      }),
    );

    // Two agent runs: one answers, one fails (the model refuses the request).
    model.script({ text: "one", usage: { input: 30, output: 6, cached: 10 } }, {
      status: 400,
      text: "refused",
    });
    for (const task of ["count", "fail"]) {
      await startAgentRun(client, "Counter", { task }, { wait: true });
    }

    const promPort = freePort();
    Deno.writeTextFileSync(
      join(dir, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: stn\n    authorization:\n` +
        `      credentials: ${token}\n    static_configs:\n      - targets: ["127.0.0.1:${port}"]\n`,
    );
    prometheus = new Deno.Command("prometheus", {
      args: [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const query = async (q: string) => {
      const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`)
        .catch(() => undefined);
      if (!res?.ok) return [];
      return (await res.json()).data.result as { metric: Record<string, string>; value: [number, string] }[];
    };
    const completed = 'stn_workflow_runs_finished_total{workflow="tiny",status="completed"}';
    assert(
      await waitFor(async () => (await query(completed)).length > 0, 20_000),
      "Prometheus scraped the run counter",
    );
    assertEquals((await query(completed))[0].value[1], "3");
    assertEquals(
      (await query('stn_workflow_runs_finished_total{workflow="boom"}'))[0].metric.status,
      "failed",
    );
    assertEquals((await query('stn_workflow_runs_started_total{workflow="tiny"}'))[0].value[1], "3");
    const steps = await query(
      'stn_workflow_step_duration_seconds_count{type="transform",outcome="completed"}',
    );
    assertEquals(steps[0].value[1], "3");
    const routes = await query(
      'stn_http_request_duration_seconds_count{route="/api/v1/workflow-runs/:run_id"}',
    );
    assert(routes.length > 0, "request durations are labelled by route pattern, not by the raw path");
    assertEquals((await query("stn_workflow_queue_pending"))[0].value[1], "0");
    assertEquals((await query('up{job="stn"}'))[0].value[1], "1");
    const tokens = await query('stn_agent_tokens_total{model="openai/test-model"}');
    assertEquals(
      Object.fromEntries(tokens.map((r) => [r.metric.kind, r.value[1]])),
      { input: "30", output: "6", cached: "10" },
    );
    const agentRuns = await query('stn_agent_runs_finished_total{agent="Counter"}');
    assertEquals(
      Object.fromEntries(agentRuns.map((r) => [r.metric.status, r.value[1]])),
      { completed: "1", failed: "1" },
    );
    assertEquals((await query('stn_agent_run_duration_seconds_count{agent="Counter"}')).length, 2);
  } finally {
    try {
      prometheus?.kill("SIGTERM");
      await prometheus?.status;
    } catch { /* exited */ }
    await t.close();
    await model.close();
    await home.cleanup();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
