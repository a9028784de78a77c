import { DatabaseSync } from "node:sqlite";
import { StationClient } from "../../src/client/http.ts";
import { listRuns, startRun } from "../../src/client/workflow_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import {
  delayServer,
  HTTP_STN,
  type NatsCluster,
  startCluster,
  startWorkerProcess,
} from "../helpers/cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { startServe, waitFor } from "../helpers/stn.ts";

const RUNS = 40;
const CUSTOMERS = 4;

/** The gated step's attempts: customer, who ran it, when it started and ended (the ledger's rows). */
function calls(dbPath: string) {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare(
      `SELECT a.run_id, json_extract(r.input, '$.customer') AS customer, a.started_at AS start,
         a.completed_at AS end FROM step_attempts a JOIN workflow_runs r ON r.id = a.run_id
       WHERE a.path = 'call' AND a.status = 'completed' ORDER BY a.started_at`,
    ).all() as { run_id: string; customer: string; start: string; end: string }[];
  } finally {
    db.close();
  }
}

/** Whether some step was recorded waiting for a step concurrency key. */
function someWaited(dbPath: string): boolean {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare("SELECT 1 FROM run_events WHERE type = 'step_waiting_for_concurrency' LIMIT 1")
      .get() !==
      undefined;
  } finally {
    db.close();
  }
}

/** Steps a `stn worker` executed, from its /metrics. */
async function executedBy(w: { stderr(): string }): Promise<number> {
  const metrics = await (await fetch(/health=(\S+)\/health/.exec(w.stderr())![1] + "/metrics")).text();
  return Number(/stn_worker_steps_executed_total\{[^}]*\} (\d+)/.exec(metrics)![1]);
}

Deno.test("step concurrency keys and a rate limit: one call per customer across two workflows, at most 5 per 500ms, on the station and 2 workers of a NATS cluster", async () => {
  const home = await tempHome();
  const io = await delayServer(30);
  let cluster: NatsCluster | undefined;
  const env = { ...home.env, STN_ENGINE_LEASE: "3s", STN_ENGINE_ACK_WAIT: "4s" };
  const stops: (() => Promise<unknown>)[] = [];
  const workers: { stderr(): string }[] = [];
  try {
    cluster = await startCluster();
    const serve = await startServe({
      env: { ...env, STN_ENGINE_WORKERS: "1" },
      home: home.home,
      main: HTTP_STN,
      args: ["--port", "0", "--nats-url", cluster.urls],
    });
    stops.push(() => serve.stop());
    const client = new StationClient(serve.url);
    for (const name of ["w1", "w2"]) {
      const w = startWorkerProcess({
        env,
        natsUrl: cluster.urls,
        name,
        args: ["--concurrency", "4", "--port", "0"],
      });
      stops.push(() => w.stop());
      workers.push(w);
    }
    assert(await waitFor(async () => (await listWorkers(client)).workers.length === 2, 30_000), "2 workers");

    // Two workflows whose `call` steps name the same key: one call per customer at a time across both.
    const definition = (id: string) => ({
      id,
      states: [
        { id: "prep", type: "transform", expression: "{'who': customer}", next: "call" },
        {
          id: "call",
          type: "http_get",
          url: io.url,
          concurrency: [{ key: "customer-${prep.who}", limit: 1 }],
          rate_limit: { key: "io", limit: 5, period: "500ms" },
          next: "done",
        },
        { id: "done", type: "transform", expression: "{'ok': call.ok}" },
      ],
    });
    await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        startRun(client, {
          definition: definition(i % 2 ? "orders" : "refunds"),
          input: { customer: `c${i % CUSTOMERS}` },
        })),
    );
    const completed = async () =>
      (await Promise.all(
        ["orders", "refunds"].map(async (w) =>
          (await listRuns(client, { workflow_id: w, status: "completed", limit: 500 })).runs.length
        ),
      )).reduce((a, b) => a + b, 0);
    assert(await waitFor(async () => (await completed()) === RUNS, 120_000), `all ${RUNS} runs complete`);
    assert(someWaited(home.path("stn.db")), "steps over the limit waited");

    const rows = calls(home.path("stn.db"));
    assertEquals(rows.length, RUNS);
    for (let c = 0; c < CUSTOMERS; c++) {
      const mine = rows.filter((r) => r.customer === `c${c}`);
      assertEquals(mine.length, RUNS / CUSTOMERS);
      for (let i = 1; i < mine.length; i++) {
        assert(
          mine[i - 1].end <= mine[i].start,
          `c${c}: ${mine[i].run_id} started before ${mine[i - 1].run_id} ended`,
        );
      }
    }
    // The shared rate limit: any 500ms of either workflow holds at most 5 starts of `call`.
    const starts = rows.map((r) => Date.parse(r.start)).sort((x, y) => x - y);
    for (let i = 0; i + 5 < starts.length; i++) {
      assert(starts[i + 5] - starts[i] >= 500, `6 starts within 500ms from #${i}: ${starts}`);
    }
    const executed = await Promise.all(workers.map(executedBy));
    assert(executed.every((n) => n > 0), `both workers ran steps: ${executed}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await io.close();
    await cluster?.stop();
    await home.cleanup();
  }
});
