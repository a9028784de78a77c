import { StationClient } from "../../src/client/http.ts";
import { getRun, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import type { StepView } from "../../src/workflows/engine/views.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startServe, waitFor } from "../helpers/stn.ts";

// A chain with a durable timer halfway, so every kill lands mid-run, and a foreach whose iterations run side by side.
const chain = {
  id: "chain",
  states: [
    ...Array.from({ length: 30 }, (_, i) => ({
      id: `s${i}`,
      type: "transform",
      expression: "{'n': n + 1}",
      output: { n: "$.n" },
      ...(i < 29 ? { next: i === 14 ? "pause" : `s${i + 1}` } : {}),
    })),
    { id: "pause", type: "timer", duration: "1s", next: "s15" },
  ],
};
const loop = {
  id: "loop",
  states: [{
    id: "each",
    type: "foreach",
    itemsPath: "items",
    maxConcurrency: 3,
    iterator: {
      states: [
        { id: "nap", type: "timer", duration: "300ms", next: "sq" },
        { id: "sq", type: "transform", expression: "{'v': item * item}" },
      ],
    },
  }],
};

const TERMINAL = ["completed", "failed", "canceled"];

/** The station's sync counters from /metrics. */
async function counters(url: string): Promise<{ syncs: number; started: number; unsynced: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return {
    syncs: read("stn_ledger_syncs"),
    started: read("stn_workflow_steps_started"),
    unsynced: read("stn_workflow_steps_started_unsynced"),
  };
}

Deno.test("crash: a kill -9 loop under ledger.durability: step loses no run, completes no step twice, and no step starts before its predecessor's sync", async () => {
  const home = await tempHome();
  const env = {
    ...home.env,
    STN_ENGINE_LEASE: "2s",
    STN_ENGINE_ACK_WAIT: "3s",
    STN_LEDGER_DURABILITY: "step",
  };
  let serve = await startServe({ env, home: home.home });
  const expected = new Map<string, unknown>();
  let started = 0;
  let interrupted = 0;
  try {
    for (let round = 0; round < 3; round++) {
      const client = new StationClient(serve.url);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push((await startRun(client, { definition: chain, input: { n: i } })).id);
        expected.set(ids.at(-1)!, { n: i + 30 });
      }
      for (let i = 0; i < 2; i++) {
        ids.push((await startRun(client, { definition: loop, input: { items: [1, 2, i] } })).id);
        expected.set(ids.at(-1)!, { count: 3, results: [1, 4, i * i].map((v) => ({ v })) });
      }
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 250));
      for (const id of ids) if (!TERMINAL.includes((await getRun(client, id)).status)) interrupted++;
      // Read just before the kill: every step this process started so far, against the sync counter.
      const c = await counters(serve.url);
      assertEquals(c.unsynced, 0, `round ${round}: steps started before their sync`);
      assert(c.syncs >= 1 && c.started >= 1, `round ${round}: ${JSON.stringify(c)}`);
      started += c.started;
      const status = await serve.stop("SIGKILL");
      assertEquals(status.signal, "SIGKILL");
      serve = await startServe({ env, home: home.home });
    }
    const client = new StationClient(serve.url);
    const done = await waitFor(async () => {
      for (const id of expected.keys()) {
        if (!TERMINAL.includes((await getRun(client, id)).status)) return false;
      }
      return true;
    }, 60_000);
    assert(done, "every run finished after the last restart");
    for (const [id, result] of expected) {
      const run = await getRun(client, id);
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
      assertEquals(
        completed.size,
        { chain: 31, loop: 7 }[run.workflow_id as "chain"],
        `${run.workflow_id} ${id}`,
      );
    }
    const last = await counters(serve.url);
    assertEquals(last.unsynced, 0, "after the last restart: steps started before their sync");
    console.log(
      `runs: ${expected.size}, ${interrupted} unfinished at a kill; steps started: ${
        started + last.started
      }, ` +
        "none before its sync",
    );
    assert(interrupted >= 3, `the kills should interrupt runs (${interrupted} were unfinished at one)`);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
