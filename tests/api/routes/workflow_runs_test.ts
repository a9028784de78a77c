import { getRun, listApprovals, runEvents, startRun } from "../../../src/client/workflow_runs.ts";
import { StationError } from "../../../src/errors.ts";
import type { RunEvent } from "../../../src/events/run_events.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";

const gated = {
  id: "gated",
  inputSchema: { type: "object", properties: { who: { type: "string", default: "world" } } },
  states: [
    { id: "hello", type: "inject", data: { greeting: "hello ${who}" }, next: "ask" },
    { id: "ask", type: "human_approval", message: "greet ${who}?", next: "done" },
    { id: "done", type: "transform", expression: "{'greeting': hello.greeting, 'by': ask.decided_by}" },
  ],
};

async function expectError(p: Promise<unknown>, status: number, code: string): Promise<void> {
  const err = await p.then(() => undefined, (e) => e);
  assert(err instanceof StationError, `expected a StationError, got ${err}`);
  assertEquals([err.status, err.code], [status, code]);
}

/** Reads SSE frames from a raw response until n events arrived. */
async function readFrames(res: Response, n: number): Promise<{ id: string; event: RunEvent }[]> {
  const out: { id: string; event: RunEvent }[] = [];
  let buf = "";
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (out.length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0 && out.length < n) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const id = /^id: ?(.*)$/m.exec(frame)?.[1];
      const data = /^data: ?(.*)$/m.exec(frame)?.[1];
      if (id && data) out.push({ id, event: JSON.parse(data) });
    }
  }
  await reader.cancel();
  return out;
}

Deno.test("run API: start with defaults applied, list, steps, approvals, 409s, 404s, SSE resume", async (t) => {
  const { station, client, close } = await startTestStation();
  try {
    const run = await startRun(client, { definition: gated, input: {} });
    assertEquals(run.input, { who: "world" });

    await t.step("approval shows up; list/filter routes answer", async () => {
      assert(await waitFor(async () => (await getRun(client, run.id)).status === "waiting"));
      const pending = await listApprovals(client, { run_id: run.id, status: "pending" });
      assertEquals(pending.length, 1);
      assertEquals(pending[0].message, "greet world?");
      const list = await client.json<{ runs: { id: string }[] }>("GET", "/api/v1/workflow-runs", {
        query: { workflow_id: "gated", status: "waiting" },
      });
      assertEquals(list.runs.map((r) => r.id), [run.id]);
    });

    await t.step(
      "SSE: reconnect with Last-Event-ID gets exactly the missed events, then live ones",
      async () => {
        const url = client.url(`/api/v1/workflow-runs/${run.id}/events`);
        const first = await readFrames(await fetch(url), 3);
        assertEquals(first.map((f) => f.id), ["1", "2", "3"]);
        const lastSeen = first[2].id;
        // Events appended while disconnected: the approval decision and the rest of the run.
        const [approval] = await listApprovals(client, { run_id: run.id });
        await client.json("POST", `/api/v1/workflow-approvals/${approval.id}/approve`, {
          body: { actor: "dana", comment: "ok" },
        });
        assert(await waitFor(async () => (await getRun(client, run.id)).status === "completed"));
        const res = await fetch(url, { headers: { "last-event-id": lastSeen } });
        const rest = await readFrames(res, 1000);
        const stored = station.ctx.engine.reads.events.after(run.id, 3);
        assertEquals(rest.map((f) => Number(f.id)), stored.map((e) => e.seq));
        assertEquals(rest.at(-1)!.event.type, "run_completed");
        assertEquals((await getRun(client, run.id)).result, { greeting: "hello world", by: "dana" });

        // Live: a client that connects first sees events as they happen, and the stream ends after the terminal one.
        const live = await startRun(client, { definition: gated, input: { who: "x" } });
        const seen: string[] = [];
        const following = (async () => {
          for await (const e of runEvents(client, live.id)) seen.push(e.type);
        })();
        assert(await waitFor(() => seen.includes("approval_requested")));
        const [a2] = await listApprovals(client, { run_id: live.id });
        await client.json("POST", `/api/v1/workflow-approvals/${a2.id}/reject`, { body: {} });
        await following;
        assertEquals(seen.at(-1), "run_failed");
        const after = await readFrames(
          await fetch(client.url(`/api/v1/workflow-runs/${live.id}/events`, { after: "now" })),
          1,
        );
        assertEquals(after, []);
      },
    );

    await t.step("deciding twice is a 409; unknown ids are 404s; bad bodies are 400s", async () => {
      const [approval] = await listApprovals(client, { run_id: run.id, status: "approved" });
      await expectError(
        client.json("POST", `/api/v1/workflow-approvals/${approval.id}/reject`, { body: {} }),
        409,
        "approval_decided",
      );
      await expectError(getRun(client, "nope"), 404, "run_not_found");
      await expectError(
        client.fetch("GET", `/api/v1/workflow-runs/${run.id}/events`, { query: { after: "-1" } }),
        400,
        "invalid_cursor",
      );
      await expectError(
        startRun(client, { definition: { id: "bad", states: [{ id: "x", type: "nope" }] } }),
        400,
        "invalid_definition",
      );
      await expectError(
        startRun(client, { definition: { ...gated, inputSchema: { type: "object", required: ["who"] } } }),
        400,
        "input_invalid",
      );
      await expectError(
        client.json("POST", `/api/v1/workflow-runs/${run.id}/cancel`, { body: {} }),
        409,
        "run_finished",
      );
    });
    await t.step("step messages carry the run's W3C traceparent in their headers", async () => {
      const nc = station.ctx.nats.nc;
      // On a queue of its own: a `default`-queue step the station can run is claimed eagerly, with no message.
      const sub = nc.subscribe("workflow.queue.traced.run.*.step.*.schedule", { max: 1 });
      const trace = "0af7651916cd43dd8448eb211c80319c";
      await client.json("POST", "/api/v1/workflow-runs", {
        body: {
          definition: {
            id: "traced",
            states: [{ id: "one", type: "transform", expression: "1", queue: "traced" }],
          },
        },
        headers: { traceparent: `00-${trace}-b7ad6b7169203331-01` },
      });
      for await (const msg of sub) {
        const tp = msg.headers?.get("traceparent") ?? "";
        assert(new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`).test(tp), `traceparent ${tp}`);
        assertEquals(Object.keys(msg.json<object>()).sort(), ["attempt", "id", "path", "run"]);
      }
    });

    await t.step("stored workflows: run by id (latest or a version), disabled is a 409", async () => {
      // The inline runs above ran once and stored nothing; save: true stores v1, apply the stricter v2.
      assertEquals(station.ctx.workflows.has("gated"), false, "a one-off run stores no workflow");
      const saved = await startRun(client, { definition: gated, save: true, input: {} });
      assertEquals(saved.workflow_version, 1);
      await client.json("POST", "/api/v1/workflows", {
        body: { ...gated, inputSchema: { type: "object", required: ["who"] } },
      });
      const stored = await client.json<{ id: string; workflow_version: number; status: string }>(
        "POST",
        "/api/v1/workflows/gated/runs",
        { body: { input: { who: "stored" } } },
      );
      assertEquals(stored.workflow_version, 2);
      const v1 = await startRun(client, { workflowId: "gated", version: 1, input: {} });
      assertEquals(v1.workflow_version, 1);
      await expectError(
        startRun(client, { workflowId: "gated", version: 9 }),
        404,
        "workflow_version_not_found",
      );
      await expectError(startRun(client, { workflowId: "missing" }), 404, "workflow_not_found");
      station.ctx.workflows.disable("gated");
      await expectError(startRun(client, { workflowId: "gated" }), 409, "workflow_disabled");
    });
  } finally {
    await close();
  }
});
