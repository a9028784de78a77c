import { StationClient } from "../../src/client/http.ts";
import { getRun, listApprovals, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../sandbox/backend.ts";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp_receiver.ts";

// A foreach, then an approval (the process is killed while the run waits on it), then a sandbox step that
// runs in the restarted process.
const definition = {
  id: "traced",
  states: [
    {
      id: "each",
      type: "foreach",
      itemsPath: "items",
      iterator: { states: [{ id: "sq", type: "transform", expression: "{'v': item * item}" }] },
      next: "ask",
    },
    { id: "ask", type: "human_approval", message: "go on?", next: "shell" },
    { id: "shell", type: "sandbox", script: "echo traced" },
  ],
};

Deno.test("traces: one trace links the API request, the run, every step attempt and the sandbox exec, across a kill -9", async () => {
  const receiver = startOtlpReceiver();
  const home = await tempHome();
  home.writeConfig(SANDBOX_CONFIG);
  const env = {
    ...home.env,
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "stn-trace-test",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    STN_LOG_FORMAT: "json",
  };
  let serve = await startServe({ env, home: home.home });
  try {
    let client = new StationClient(serve.url);
    const run = await startRun(client, { definition, input: { items: [1, 2, 3] } });
    assert(await waitFor(async () => (await getRun(client, run.id)).status === "waiting", 20_000));
    const traceId = (await getRun(client, run.id)).trace_id!;
    assert(/^[0-9a-f]{32}$/.test(traceId), `trace id ${traceId}`);
    const ofRun = () => receiver.spans.filter((s) => s.traceId === traceId);
    // Spans reach the receiver in batches: wait until the first process has exported the work before the kill,
    // the request's span too (it may end after the steps it started, and go in a later batch).
    assert(
      await waitFor(
        () =>
          ofRun().some((s) => s.attributes["stn.step.path"] === "ask") &&
          ofRun().some((s) => s.name === "POST /api/v1/workflow-runs"),
        10_000,
      ),
      "the request and the steps before the kill were exported",
    );
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    // Log lines written inside a span carry its trace id: the access line of the request that started the run.
    const started = serve.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
      .find((l) => l.message === "request" && l.method === "POST");
    assertEquals(started?.trace_id, traceId);

    serve = await startServe({ env, home: home.home });
    client = new StationClient(serve.url);
    const [approval] = await listApprovals(client, { run_id: run.id, status: "pending" });
    await client.json("POST", `/api/v1/workflow-approvals/${approval.id}/approve`, {
      body: { actor: "ops" },
    });
    assert(await waitFor(async () => (await getRun(client, run.id)).status === "completed", 30_000));
    assert(
      await waitFor(() => ofRun().some((s) => s.name === "sandbox.exec"), 10_000),
      "the sandbox exec after the restart was exported",
    );

    const spans = ofRun();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parent = (s: ReceivedSpan) => byId.get(s.parentSpanId);
    const request = spans.find((s) => s.name === "POST /api/v1/workflow-runs");
    assert(request, `the API request's span: ${spans.map((s) => s.name)}`);
    assertEquals(request.attributes["http.route"], "/api/v1/workflow-runs");
    const runSpan = spans.find((s) => s.name === "workflow.run traced");
    assertEquals(runSpan?.attributes["stn.run.id"], run.id);
    assertEquals(
      parent(runSpan!)?.spanId,
      request.spanId,
      "the run is a child of the request that started it",
    );

    const steps = await runSteps(client, run.id);
    assertEquals(steps.length, 6, "each, 3 iterations, ask, shell");
    for (const step of steps) {
      const attempt = spans.find((s) =>
        s.name === `workflow.step ${step.path}` && s.attributes["stn.step.attempt"] === step.attempt
      );
      assert(attempt, `a span for ${step.path} attempt ${step.attempt}`);
      assertEquals(attempt.attributes["stn.run.id"], run.id);
      assertEquals(attempt.attributes["stn.step.type"], step.type);
      assertEquals(parent(attempt)?.spanId, runSpan!.spanId, `${step.path} is a child of the run`);
    }
    const exec = spans.find((s) => s.name === "sandbox.exec")!;
    const ancestors: string[] = [];
    for (let s = parent(exec); s; s = parent(s)) ancestors.push(s.name);
    // `shell` ran in the restarted process (its approval was decided there), yet joins the same trace.
    assertEquals(ancestors, ["workflow.step shell", "workflow.run traced", "POST /api/v1/workflow-runs"]);

    // A run an event starts: the event's request → the run → its step.
    await client.json("POST", "/api/v1/workflows", {
      body: {
        id: "hooked",
        triggers: [{ event: "ping" }],
        states: [{ id: "one", type: "inject", data: {} }],
      },
    });
    const sent = await client.json<{ event: { started: { run_id: string }[] } }>("POST", "/api/v1/events", {
      body: { name: "ping", data: {} },
    });
    const hooked = sent.event.started[0].run_id;
    assert(await waitFor(async () => (await getRun(client, hooked)).status === "completed", 10_000));
    const hookedTrace = (await getRun(client, hooked)).trace_id;
    const chainOf = () => {
      const all = receiver.spans.filter((s) => s.traceId === hookedTrace);
      const step = all.find((s) => s.name === "workflow.step one");
      const names: string[] = [];
      for (let s = step; s; s = all.find((p) => p.spanId === s!.parentSpanId)) names.push(s.name);
      return names;
    };
    assert(await waitFor(() => chainOf().length === 3, 10_000), `${chainOf()}`);
    assertEquals(chainOf(), ["workflow.step one", "workflow.run hooked", "POST /api/v1/events"]);

    const inspect = await runStn(["workflow", "inspect", run.id, "--trace", "--station", serve.url], { env });
    assertEquals([inspect.code, inspect.stdout.trim()], [0, traceId], inspect.stderr);
  } finally {
    await serve.stop("SIGKILL").catch(() => {});
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
    await receiver.close();
  }
});
