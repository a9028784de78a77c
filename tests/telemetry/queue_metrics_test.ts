import { StationClient } from "../../src/client/http.ts";
import { runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { singleNats, startWorkerProcess } from "../helpers/cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { startServe, waitFor } from "../helpers/stn.ts";

/** The samples of one metric in a Prometheus text page, by their `queue` label. */
function byQueue(page: string, metric: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of page.matchAll(new RegExp(`^${metric}\\{queue="([^"]+)"\\} (\\S+)$`, "gm"))) {
    out[m[1]] = Number(m[2]);
  }
  return out;
}

Deno.test("metrics: a step on a queue no worker serves is counted per queue, next to the live workers per queue", async () => {
  const home = await tempHome();
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url],
  });
  const worker = startWorkerProcess({
    env: home.env,
    natsUrl: nats.url,
    name: "gpu-1",
    args: ["--queue", "gpu"],
  });
  try {
    const client = new StationClient(serve.url);
    const scrape = async () => await (await fetch(`${serve.url}/metrics`)).text();
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      worker.stderr(),
    );
    const run = await startRun(client, {
      definition: {
        id: "unserved",
        states: [{ id: "wait", type: "transform", expression: "{'x': 1}", queue: "nobody", timeout: "1m" }],
      },
      input: {},
    });
    const [step] = await runSteps(client, run.id);
    assertEquals(step.waiting_for, "waiting for a worker on queue nobody");

    const page = await scrape();
    assert(page.includes('stn_steps_waiting_for_worker{queue="nobody"} 1\n'), page);
    // The same count as GET /api/v1/workers (one definition of "waiting"); the served queue waits on nothing.
    const waiting = byQueue(page, "stn_steps_waiting_for_worker");
    const unserved = (await listWorkers(client)).unserved;
    assertEquals(waiting, Object.fromEntries(unserved.map((u) => [u.queue, u.waiting])));
    assertEquals(byQueue(page, "stn_workers"), { gpu: 1, nobody: 0 });
  } finally {
    await worker.stop();
    await serve.stop();
    await nats.stop();
    await home.cleanup();
  }
});
