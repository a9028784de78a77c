import { DatabaseSync } from "node:sqlite";
import { listRuns, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { eventRecorded, executedBy, startFlowCluster } from "../helpers/flow_cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { waitFor } from "../helpers/stn.ts";

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

Deno.test("step concurrency keys and a rate limit: one call per customer across two workflows, at most 5 per 500ms, on the station and 2 workers of a NATS cluster", async () => {
  const home = await tempHome();
  const flow = await startFlowCluster(home).catch(async (err) => {
    await home.cleanup();
    throw err;
  });
  const { client, io, workers, stop } = flow;
  try {
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
    assert(eventRecorded(home.path("stn.db"), "step_waiting_for_concurrency"), "steps over the limit waited");

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
    await stop();
    await home.cleanup();
  }
});
