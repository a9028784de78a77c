import { createHmac } from "node:crypto";
import { listEvents, runSignals, sendEvent, signalRun } from "../../src/client/events.ts";
import { getRun, startRun } from "../../src/client/workflow_runs.ts";
import { StationError } from "../../src/errors.ts";
import { hookProblems } from "../../src/events/webhooks.ts";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { startTestStation, type TestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { attempts, def, eventTypes, waitRun } from "./helpers.ts";

const HOOK_SECRET = "s3cret-s3cret-s3cret";
const CONFIG = `
events:
  hooks:
    ci:
      secret: ${HOOK_SECRET}
      event: "ci.\${status}"
      data: "{'commit': head_sha, 'status': status}"
      id: "$headers.'x-delivery'"
    plain:
      secret: ${HOOK_SECRET}
      signature: bearer
      event: deploy.requested
`;

const waiter = (extra: Record<string, unknown> = {}) =>
  def({
    id: "waiter",
    states: [
      { id: "wait", type: "await", event: "go", resultPath: "got", ...extra, next: "after" },
      { id: "after", type: "transform", expression: "{'data': got.data, 'name': got.name}" },
      { id: "late", type: "inject", data: { late: true } },
    ],
  });

async function waiting(t: TestStation, runId: string, step = "wait"): Promise<void> {
  const reads = t.station.ctx.engine.reads;
  const ok = await waitFor(() =>
    reads.waits.ofRun(runId).some((w) => w.status === "pending" && w.path === step)
  );
  assert(ok, `run ${runId} waits at ${step}`);
}

Deno.test("events and signals through the real engine", async (t) => {
  const ts = await startTestStation({ configYaml: CONFIG });
  const { station, client } = ts;
  const engine = station.ctx.engine;
  try {
    await t.step("wait, then a signal resumes the step with the event as its output", async () => {
      const run = await engine.startRun({ definition: waiter(), input: {} });
      await waiting(ts, run.id);
      assertEquals(engine.reads.runs.get(run.id)!.status, "waiting");
      const a = await signalRun(client, run.id, { name: "go", payload: { n: 1 }, id: "sig-1" });
      assertEquals(a.signal.delivered_to, "wait");
      assertEquals(a.duplicate, false);
      const done = await waitRun(engine, run.id);
      assertEquals(JSON.parse(done.result!), { data: { n: 1 }, name: "go" });
      const [w] = attempts(engine, run.id);
      const output = JSON.parse(w.output!);
      assertEquals([output.name, output.id, output.data], ["go", "sig-1", { n: 1 }]);
      assert(typeof output.received_at === "string");
      const types = eventTypes(engine, run.id);
      assert(types.includes("signal_received") && types.includes("event_received"), types.join(" "));
    });

    await t.step(
      "a signal before the wait is kept on the run and consumed by the later wait, once",
      async () => {
        const run = await engine.startRun({
          definition: def({
            id: "early",
            states: [
              { id: "nap", type: "timer", duration: "300ms", next: "wait" },
              { id: "wait", type: "await", event: "go", next: "again" },
              { id: "again", type: "await", event: "go", timeout: "300ms", onTimeout: "none" },
              { id: "none", type: "inject", data: { second: "timed out" } },
            ],
          }),
          input: {},
        });
        const kept = await signalRun(client, run.id, { name: "go", payload: "early", id: "k1" });
        assertEquals(kept.signal.delivered_to, null);
        assertEquals((await signalRun(client, run.id, { name: "go", id: "k1" })).duplicate, true);
        const done = await waitRun(engine, run.id);
        assertEquals(JSON.parse(done.result!), { second: "timed out" }, "one signal ended one wait, not two");
        const signals = await runSignals(client, run.id);
        assertEquals(signals.map((s) => [s.id, s.delivered_to]), [["k1", "wait"]]);
      },
    );

    await t.step(
      "wait, then the timeout routes to onTimeout; without onTimeout the step fails timed_out",
      async () => {
        const routed = await engine.startRun({
          definition: waiter({ timeout: "200ms", onTimeout: "late" }),
          input: {},
        });
        const failed = await engine.startRun({ definition: waiter({ timeout: "200ms" }), input: {} });
        const r = await waitRun(engine, routed.id);
        assertEquals([r.status, JSON.parse(r.result!)], ["completed", { late: true }]);
        const f = await waitRun(engine, failed.id);
        assertEquals([f.status, JSON.parse(f.error!).code], ["failed", "timed_out"]);
        assertEquals(engine.reads.waits.ofRun(failed.id).map((w) => w.status), ["timed_out"]);
        // A signal after the timeout reaches nothing: the run has ended.
        await assertRejects(
          () => signalRun(client, failed.id, { name: "go" }),
          StationError,
          "already failed",
        );
      },
    );

    await t.step(
      "one event ends two waits of one run (parallel branches), and the branches join",
      async () => {
        const run = await engine.startRun({
          definition: def({
            id: "both",
            states: [{
              id: "par",
              type: "parallel",
              branches: ["a", "b"].map((name) => ({
                name,
                states: [{ id: `w_${name}`, type: "await", event: "release" }],
              })),
            }],
          }),
          input: {},
        });
        assert(await waitFor(() => engine.reads.waits.ofRun(run.id).length === 2));
        const sent = await sendEvent(client, { name: "release", data: { v: 1 } });
        assertEquals(sent.event.resumed.map((r) => r.step).sort(), ["par/a/w_a", "par/b/w_b"]);
        const done = await waitRun(engine, run.id);
        assertEquals(Object.keys(JSON.parse(done.result!)).sort(), ["a", "b"]);
      },
    );

    await t.step("cancel ends the wait", async () => {
      const run = await engine.startRun({ definition: waiter(), input: {} });
      await waiting(ts, run.id);
      engine.cancel(run.id);
      assertEquals(engine.reads.waits.ofRun(run.id).map((w) => w.status), ["canceled"]);
      const sent = await sendEvent(client, { name: "go", data: 1 });
      assert(!sent.event.resumed.some((r) => r.run_id === run.id));
    });

    await t.step("100 runs wait on order.paid; one event resumes exactly the matching run", async () => {
      const orders = def({
        id: "orders",
        states: [
          {
            id: "paid",
            type: "await",
            event: "order.paid",
            match: "event.data.order_id = order.id",
            next: "ship",
          },
          { id: "ship", type: "transform", expression: "{'shipped': order.id, 'amount': paid.data.amount}" },
        ],
      });
      const runs: string[] = [];
      for (let i = 0; i < 100; i++) {
        runs.push((await engine.startRun({ definition: orders, input: { order: { id: i } } })).id);
      }
      assert(await waitFor(() => runs.every((id) => engine.reads.waits.ofRun(id).length === 1), 20_000));
      const sent = await sendEvent(client, {
        name: "order.paid",
        data: { order_id: 42, amount: 9.5 },
        id: "pay-42",
      });
      assertEquals(sent.event.resumed, [{ run_id: runs[42], step: "paid" }]);
      const done = await waitRun(engine, runs[42]);
      assertEquals(JSON.parse(done.result!), { shipped: 42, amount: 9.5 });
      const statuses = runs.map((id) => engine.reads.runs.get(id)!.status);
      assertEquals(statuses.filter((s) => s === "waiting").length, 99);
      // The same id again does nothing, and says so.
      const again = await sendEvent(client, { name: "order.paid", data: { order_id: 7 }, id: "pay-42" });
      assertEquals([again.duplicate, again.event.id, again.event.resumed.length], [true, "pay-42", 1]);
      assertEquals(engine.reads.runs.get(runs[7])!.status, "waiting");
      for (const id of runs) if (id !== runs[42]) engine.cancel(id);
    });

    await t.step("an event trigger starts the workflow with the mapped input; `if` filters", async () => {
      await client.json("POST", "/api/v1/workflows", {
        body: {
          id: "on-push",
          triggers: [{
            event: "git.push",
            if: "event.data.branch = 'main'",
            input: { sha: "event.data.sha" },
          }],
          inputSchema: { type: "object", required: ["sha"], properties: { sha: { type: "string" } } },
          states: [{
            id: "echo",
            type: "transform",
            expression: "{'sha': sha, 'by': workflow.trigger.event}",
          }],
        },
      });
      const skipped = await sendEvent(client, { name: "git.push", data: { branch: "dev", sha: "x" } });
      assertEquals(skipped.event.started, []);
      const sent = await sendEvent(client, {
        name: "git.push",
        data: { branch: "main", sha: "abc" },
        id: "push-1",
      });
      assertEquals(sent.event.started.length, 1);
      const runId = sent.event.started[0].run_id!;
      const run = await waitRun(engine, runId);
      assertEquals(JSON.parse(run.result!), { sha: "abc", by: "git.push" });
      const again = await sendEvent(client, {
        name: "git.push",
        data: { branch: "main", sha: "abc" },
        id: "push-1",
      });
      assertEquals(again.duplicate, true);
      assertEquals(engine.reads.runs.list({ workflowId: "on-push", limit: 10 }).runs.length, 1);
      const listed = await listEvents(client, { name: "git.push" });
      assertEquals(listed.events.map((e) => e.id)[0], "push-1");
    });

    await t.step(
      "webhooks: a bad signature is 401 and creates nothing; a signed one becomes an event",
      async () => {
        const before = engine.reads.eventLog.list({ limit: 500 }).events.length;
        const body = JSON.stringify({ head_sha: "abc123", status: "finished" });
        const post = (headers: Record<string, string>, name = "ci", b = body) =>
          fetch(`${station.url}/api/v1/hooks/${name}`, { method: "POST", headers, body: b });
        const sign = (b: string) => `sha256=${createHmac("sha256", HOOK_SECRET).update(b).digest("hex")}`;
        const bad: Record<string, string>[] = [
          {},
          { "x-hub-signature-256": sign(body + " ") },
          { "x-hub-signature-256": "sha256=00" },
          { authorization: `Bearer ${HOOK_SECRET}` },
        ];
        for (const headers of bad) {
          const res = await post(headers);
          assertEquals(res.status, 401);
          assertEquals((await res.json()).error.code, "invalid_signature");
        }
        assertEquals((await post({ authorization: "Bearer wrong" }, "plain")).status, 401);
        assertEquals((await post({}, "nope")).status, 404);
        assertEquals(engine.reads.eventLog.list({ limit: 500 }).events.length, before, "nothing recorded");

        const deploy = await engine.startRun({
          definition: def({
            id: "deploy",
            states: [{ id: "ci", type: "await", event: "ci.finished", match: "event.data.commit = sha" }],
          }),
          input: { sha: "abc123" },
        });
        await waiting(ts, deploy.id, "ci");
        const ok = await post({ "x-hub-signature-256": sign(body), "x-delivery": "d-1" });
        assertEquals(ok.status, 201);
        const answer = await ok.json();
        assertEquals([answer.event.name, answer.event.id, answer.event.source], [
          "ci.finished",
          "d-1",
          "hook:ci",
        ]);
        assertEquals(answer.event.resumed, [{ run_id: deploy.id, step: "ci" }]);
        const run = await waitRun(engine, deploy.id);
        assertEquals(JSON.parse(run.result!).data, { commit: "abc123", status: "finished" });
        const bearer = await post({ authorization: `Bearer ${HOOK_SECRET}` }, "plain");
        assertEquals(bearer.status, 201);
      },
    );

    await t.step("a signal to an unknown run is 404; a bad event name is 400", async () => {
      await assertRejects(() => signalRun(client, "nope", { name: "go" }), StationError, "no workflow run");
      await assertRejects(() => sendEvent(client, { name: "bad name!" }), StationError, "event names");
      const run = await startRun(client, { definition: waiter(), input: {} });
      assertEquals((await getRun(client, run.id)).id, run.id);
      engine.cancel(run.id);
    });
  } finally {
    await ts.close();
  }
});

Deno.test("webhooks: a hook mapping that does not parse is a config error naming the key", () => {
  const hook = { secret: HOOK_SECRET, signature: "hmac-sha256" as const, event: "ci.${status", data: "a ==" };
  const problems = hookProblems({ ci: hook });
  assertEquals(problems.length, 2, problems.join("\n"));
  assert(problems[0].startsWith("events.hooks.ci.event:") && problems[1].startsWith("events.hooks.ci.data:"));
  assertEquals(hookProblems({ ci: { ...hook, event: "ci.${status}", data: "{'a': b}" } }), []);
});

Deno.test("webhooks beyond loopback need no API token when signed, the events API does; ids are forgotten after events.retention", async () => {
  const token = "a-long-enough-test-token";
  const ts = await startTestStation({
    configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${token}\n${
      CONFIG.replace("events:\n", "events:\n  retention: 300ms\n")
    }`,
  });
  try {
    const url = ts.station.url;
    const body = JSON.stringify({ head_sha: "f00", status: "finished" });
    const sig = `sha256=${createHmac("sha256", HOOK_SECRET).update(body).digest("hex")}`;
    const unsigned = await fetch(`${url}/api/v1/hooks/ci`, { method: "POST", body });
    assertEquals([unsigned.status, (await unsigned.json()).error.code], [401, "invalid_signature"]);
    const signed = await fetch(`${url}/api/v1/hooks/ci`, {
      method: "POST",
      body,
      headers: { "x-hub-signature-256": sig },
    });
    assertEquals(signed.status, 201);
    await signed.body?.cancel();
    const open = await fetch(`${url}/api/v1/events`, { method: "POST", body: JSON.stringify({ name: "x" }) });
    assertEquals([open.status, (await open.json()).error.code], [401, "unauthorized"]);
    assertEquals((await listEvents(ts.client)).events.map((e) => e.source), ["hook:ci"]);
    // Past events.retention an id is forgotten: the same id is a new event, and the old record is gone.
    const first = await sendEvent(ts.client, { name: "tick", id: "t-1" });
    assertEquals((await sendEvent(ts.client, { name: "tick", id: "t-1" })).duplicate, true);
    await new Promise((r) => setTimeout(r, 400));
    const later = await sendEvent(ts.client, { name: "tick", id: "t-1" });
    assertEquals(later.duplicate, false);
    assert(later.event.received_at > first.event.received_at);
    assertEquals((await listEvents(ts.client)).events.map((e) => e.id), ["t-1"], "older events pruned");
  } finally {
    await ts.close();
  }
});
