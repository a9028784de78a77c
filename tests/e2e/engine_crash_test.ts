import { StationClient } from "../../src/client/http.ts";
import { getRun, listApprovals, runEvents, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import type { StepView } from "../../src/workflows/engine/views.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startServe, waitFor } from "../helpers/stn.ts";

// A chain of transforms with a durable timer in the middle, so the kill lands mid-chain.
const chain = {
  id: "chain",
  states: [
    ...Array.from({ length: 8 }, (_, i) => ({
      id: `s${i}`,
      type: "transform",
      expression: "{'n': n + 1}",
      output: { n: "$.n" },
      ...(i < 7 ? { next: i === 3 ? "pause" : `s${i + 1}` } : {}),
    })),
    { id: "pause", type: "timer", duration: "1500ms", next: "s4" },
  ],
};
const loop = {
  id: "loop",
  states: [{
    id: "each",
    type: "foreach",
    itemsPath: "items",
    maxConcurrency: 2,
    iterator: {
      states: [
        { id: "nap", type: "timer", duration: "400ms", next: "sq" },
        { id: "sq", type: "transform", expression: "{'v': item * item}" },
      ],
    },
  }],
};
const fan = {
  id: "fan",
  states: [{
    id: "par",
    type: "parallel",
    branches: ["a", "b", "c"].map((name) => ({
      name,
      states: [{ id: `nap_${name}`, type: "timer", duration: "1500ms", next: `val_${name}` }, {
        id: `val_${name}`,
        type: "inject",
        data: { branch: name, k: "${k}" },
      }],
    })),
    next: "sum",
  }, {
    id: "sum",
    type: "transform",
    expression: "{'names': [par.a.branch, par.b.branch, par.c.branch], 'k': par.a.k}",
  }],
};
const sleepy = {
  id: "sleepy",
  states: [{ id: "nap", type: "timer", duration: "2s", next: "after" }, {
    id: "after",
    type: "transform",
    expression: "{'woke': k}",
  }],
};
const gate = {
  id: "gate",
  states: [{ id: "ask", type: "human_approval", message: "go?", next: "done" }, {
    id: "done",
    type: "transform",
    expression: "{'by': ask.decided_by}",
  }],
};

Deno.test("crash: kill -9 of stn serve with 20 runs in flight; after restart every run finishes right, each step once", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_ENGINE_LEASE: "2s", STN_ENGINE_ACK_WAIT: "3s" };
  let serve = await startServe({ env, home: home.home });
  try {
    let client = new StationClient(serve.url);
    const expected = new Map<string, unknown>();
    const submit = async (definition: unknown, input: Record<string, unknown>, result: unknown) => {
      const run = await startRun(client, { definition, input });
      expected.set(run.id, result);
      return run.id;
    };
    for (let i = 0; i < 6; i++) await submit(chain, { n: i }, { n: i + 8 });
    for (let i = 0; i < 5; i++) {
      await submit(loop, { items: [1, 2, 3, i] }, {
        count: 4,
        results: [1, 4, 9, i * i].map((v) => ({ v })),
      });
    }
    for (let i = 0; i < 5; i++) await submit(fan, { k: i }, { names: ["a", "b", "c"], k: i });
    for (let i = 0; i < 3; i++) await submit(sleepy, { k: i }, { woke: i });
    const gateRun = await submit(gate, {}, { by: "ops" });

    await new Promise((r) => setTimeout(r, 100 + Math.random() * 900));
    const killedAt = new Date().toISOString();
    const status = await serve.stop("SIGKILL");
    assertEquals(status.signal, "SIGKILL");

    serve = await startServe({ env, home: home.home });
    client = new StationClient(serve.url);
    assert(await waitFor(async () => (await getRun(client, gateRun)).status === "waiting", 20_000));
    const [approval] = await listApprovals(client, { run_id: gateRun, status: "pending" });
    await client.json("POST", `/api/v1/workflow-approvals/${approval.id}/approve`, {
      body: { actor: "ops" },
    });

    const done = await waitFor(async () => {
      for (const id of expected.keys()) {
        if (!["completed", "failed", "canceled"].includes((await getRun(client, id)).status)) return false;
      }
      return true;
    }, 45_000);
    assert(done, "every run finished after the restart");
    let inFlight = 0;
    for (const [id, result] of expected) {
      const run = await getRun(client, id);
      const events = [];
      for await (const e of runEvents(client, id, { follow: false })) events.push(e);
      if (events.some((e) => e.time > killedAt && e.type === "step_completed")) inFlight++;
      assertEquals(run.status, "completed", `${run.workflow_id} ${id}: ${JSON.stringify(run.error)}`);
      assertEquals(run.result, result, `${run.workflow_id} ${id}`);
      const steps: StepView[] = await runSteps(client, id);
      const completed = new Map<string, number>();
      for (const s of steps.filter((s) => s.status === "completed")) {
        const key = `${s.path}#${s.visit}`;
        completed.set(key, (completed.get(key) ?? 0) + 1);
      }
      for (const [key, n] of completed) {
        assertEquals(n, 1, `${run.workflow_id} ${id}: ${key} completed ${n} times`);
      }
      // Every step the definition needs is there (e.g. 8 for the chain, 1 + 4×2 for the foreach).
      const want = { chain: 9, loop: 9, fan: 8, sleepy: 2, gate: 2 }[run.workflow_id as "chain"];
      assertEquals(completed.size, want, `${run.workflow_id} ${id}: ${[...completed.keys()]}`);
    }
    console.log(`runs still in flight at the kill: ${inFlight}/20`);
    assert(inFlight >= 15, `the kill should interrupt work in flight (${inFlight} runs continued after it)`);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
