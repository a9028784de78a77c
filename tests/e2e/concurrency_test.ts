import { DatabaseSync } from "node:sqlite";
import { listRuns, startRun } from "../../src/client/workflow_runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { eventRecorded, executedBy, startFlowCluster } from "../helpers/flow_cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { waitFor } from "../helpers/stn.ts";

const RUNS = 100;
const CUSTOMERS = 5;

/** Per run: its customer, when its first step started and its last ended (from the ledger's step rows). */
function runSpans(dbPath: string, workflowId: string) {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare(
      `SELECT r.id, json_extract(r.input, '$.customer') AS customer, MIN(a.started_at) AS first,
         MAX(a.completed_at) AS last
       FROM workflow_runs r JOIN step_attempts a ON a.run_id = r.id
       WHERE r.workflow_id = ? GROUP BY r.id`,
    ).all(workflowId) as { id: string; customer: string; first: string; last: string }[];
  } finally {
    db.close();
  }
}

Deno.test("concurrency keys: 100 runs over 5 customers, limit 1 each, on the station and 2 workers of a NATS cluster", async () => {
  const home = await tempHome();
  const flow = await startFlowCluster(home).catch(async (err) => {
    await home.cleanup();
    throw err;
  });
  const { client, io, workers, stop } = flow;
  try {
    const definition = {
      id: "per-customer",
      concurrency: [{ key: "${input.customer}", limit: 1 }, { limit: 20 }],
      states: [
        { id: "fetch", type: "http_get", url: io.url, next: "shape" },
        { id: "shape", type: "transform", expression: "{'ok': fetch.ok}", next: "again" },
        { id: "again", type: "http_get", url: io.url, end: true },
      ],
    };
    for (let i = 0; i < RUNS; i += 20) {
      await Promise.all(
        Array.from(
          { length: 20 },
          (_, j) => startRun(client, { definition, input: { customer: `c${(i + j) % CUSTOMERS}` } }),
        ),
      );
    }
    const waiting = await listRuns(client, {
      workflow_id: "per-customer",
      status: "waiting_for_concurrency",
    });
    assert(
      waiting.runs.length > 0 || eventRecorded(home.path("stn.db"), "run_waiting_for_concurrency"),
      "runs over the limit wait",
    );
    assert(
      await waitFor(
        async () =>
          (await listRuns(client, { workflow_id: "per-customer", status: "completed", limit: 500 })).runs
            .length ===
            RUNS,
        120_000,
      ),
      `all ${RUNS} runs complete:\n${flow.stationLog().slice(-3000)}`,
    );

    const spans = runSpans(home.path("stn.db"), "per-customer");
    assertEquals(spans.length, RUNS);
    for (let c = 0; c < CUSTOMERS; c++) {
      const mine = spans.filter((s) => s.customer === `c${c}`).sort((x, y) => x.first.localeCompare(y.first));
      assertEquals(mine.length, RUNS / CUSTOMERS);
      for (let i = 1; i < mine.length; i++) {
        const [before, after] = [mine[i - 1], mine[i]];
        assert(
          before.last <= after.first,
          `c${c}: ${after.id} started ${after.first}, ${before.id} ended ${before.last}`,
        );
      }
    }
    // Every step ran once, here or on a worker: both workers took some, the station the rest.
    const executed = await Promise.all(workers.map(executedBy));
    assert(executed.every((n) => n > 0), `both workers ran steps: ${executed}`);
    assert(executed[0] + executed[1] < RUNS * 3, `the station ran steps too: workers ran ${executed}`);
  } finally {
    await stop();
    await home.cleanup();
  }
});
