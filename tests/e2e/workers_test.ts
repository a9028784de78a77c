import { DatabaseSync } from "node:sqlite";
import { StationClient } from "../../src/client/http.ts";
import { getRun, listRuns, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { listWorkers } from "../../src/client/workers.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import {
  delayServer,
  HTTP_STN,
  type NatsCluster,
  singleNats,
  startCluster,
  startWorkerProcess,
} from "../helpers/cluster.ts";
import { tempHome } from "../helpers/home.ts";
import { removeStationContainers, SANDBOX_CONFIG, testBackend } from "../sandbox/backend.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";
import { sleep } from "../../src/lib/async.ts";

const DELAY_MS = 400;
const CONCURRENCY = 5;

/** Asserts every step of these runs completed exactly once in the ledger; returns the runs with a reclaimed step. */
function exactlyOnceIn(dbPath: string, runs: string[], paths: string[]): Set<string> {
  const { completed, reclaimed } = ledger(dbPath, runs);
  for (const run of runs) {
    for (const path of paths) {
      assertEquals(completed.get(`${run}|${path}`), 1, `${run} ${path} completed once`);
    }
  }
  return reclaimed;
}

/** Waits until every run of the workflow completed, polling gently (the test shares the CPU with what it measures). */
async function allCompleted(client: StationClient, workflowId: string, n: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const done = await listRuns(client, { workflow_id: workflowId, status: "completed", limit: 500 });
    if (done.runs.length === n) return true;
    await sleep(400);
  }
  return false;
}

/** Steps completed per run and path, and the runs with a reclaimed step, read from the station's ledger. */
function ledger(dbPath: string, runIds: string[]) {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const ids = new Set(runIds);
    const completed = new Map<string, number>();
    for (
      const r of db.prepare(
        "SELECT run_id, path, COUNT(*) AS n FROM step_attempts WHERE status = 'completed' GROUP BY run_id, path",
      ).all() as { run_id: string; path: string; n: number }[]
    ) if (ids.has(r.run_id)) completed.set(`${r.run_id}|${r.path}`, r.n);
    const reclaimed = new Set(
      (db.prepare("SELECT DISTINCT run_id FROM run_events WHERE type = 'step_reclaimed'").all() as {
        run_id: string;
      }[]).map((r) => r.run_id).filter((id) => ids.has(id)),
    );
    return { completed, reclaimed };
  } finally {
    db.close();
  }
}

Deno.test("workers: a station with no local workers, stn worker processes on a 3-node NATS cluster", async (t) => {
  const home = await tempHome();
  const io = await delayServer(DELAY_MS);
  let cluster: NatsCluster | undefined;
  const env = { ...home.env, STN_ENGINE_LEASE: "2s", STN_ENGINE_ACK_WAIT: "3s" };
  const stops: (() => Promise<unknown>)[] = [];
  try {
    cluster = await startCluster();
    const serve = await startServe({
      env,
      home: home.home,
      main: HTTP_STN,
      args: ["--port", "0", "--nats-url", cluster.urls, "--no-local-workers"],
    });
    stops.push(() => serve.stop());
    const client = new StationClient(serve.url);
    const worker = (name: string, queues: string[]) => {
      const w = startWorkerProcess({
        env,
        natsUrl: cluster!.urls,
        name,
        args: [...queues.flatMap((q) => ["--queue", q]), "--concurrency", String(CONCURRENCY), "--port", "0"],
      });
      stops.push(() => w.stop());
      return w;
    };
    const a = worker("a", ["solo", "trio"]);
    const b = worker("b", ["trio", "special"]);
    const c = worker("c", ["trio"]);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 3, 30_000),
      `three workers announce themselves:\n${a.stderr()}${b.stderr()}${c.stderr()}`,
    );
    const metricsUrl = (w: { stderr(): string }) => /health=(\S+)\/health/.exec(w.stderr())![1] + "/metrics";
    const executed = async (w: { stderr(): string }) =>
      Number(
        /stn_worker_steps_executed_total\{[^}]*\} (\d+)/.exec(await (await fetch(metricsUrl(w))).text())![1],
      );
    const inFlight = async (w: { stderr(): string }) =>
      Number(/stn_worker_steps_in_flight\{[^}]*\} (\d+)/.exec(await (await fetch(metricsUrl(w))).text())![1]);

    const fetchFlow = (id: string, queue: string, extra: unknown[] = []) => ({
      id,
      defaults: { queue },
      states: [
        { id: "fetch", type: "http_get", url: io.url, ...(extra.length ? { next: "sum" } : {}) },
        ...extra,
      ],
    });
    const sum = { id: "sum", type: "transform", expression: "{'ok': fetch.ok}" };

    /** Starts n runs while the I/O is held, opens it, waits for all; returns them and the steps per second. */
    const batch = async (definition: unknown, n: number) => {
      io.gate();
      const runs: string[] = [];
      for (let i = 0; i < n; i += 25) {
        const ids = await Promise.all(
          Array.from({ length: Math.min(25, n - i) }, () => startRun(client, { definition, input: {} })),
        );
        runs.push(...ids.map((r) => r.id));
      }
      io.open();
      const id = (definition as { id: string }).id;
      assert(await allCompleted(client, id, n, 60_000), `all ${n} runs of ${id} completed`);
      const done = await listRuns(client, { workflow_id: id, limit: 500 });
      const last = Math.max(...done.runs.map((r) => Date.parse(r.completed_at!)));
      return { runs, perSecond: n / ((last - io.openedAt) / 1000) };
    };

    const exactlyOnce = (runs: string[], paths: string[]) => exactlyOnceIn(home.path("stn.db"), runs, paths);

    await t.step("300 runs: every step exactly once; 3 workers ≥ 2.4× one worker's throughput", async () => {
      const one = await batch(fetchFlow("solo", "solo"), 60);
      const three = await batch(fetchFlow("trio", "trio"), 300);
      exactlyOnce([...one.runs, ...three.runs], ["fetch"]);
      for (const run of [...one.runs, ...three.runs]) assertEquals(io.hits.get(`${run}|fetch`), 1);
      const ratio = three.perSecond / one.perSecond;
      console.log(
        `steps/s: 1 worker ${one.perSecond.toFixed(1)}, 3 workers ${three.perSecond.toFixed(1)} (×${
          ratio.toFixed(2)
        })`,
      );
      const counts = await Promise.all([a, b, c].map(executed));
      assert(
        ratio >= 2.4,
        `3 workers give ×${
          ratio.toFixed(2)
        } of one worker's throughput (want ≥ 2.4); steps run by a, b, c: ${counts}`,
      );
    });

    await t.step("queue routing: `queue: special` runs only on the worker serving it", async () => {
      const before = await Promise.all([a, b, c].map(executed));
      const { runs } = await batch({
        id: "special",
        states: [{ id: "fetch", type: "http_get", url: io.url, queue: "special" }],
      }, 10);
      const after = await Promise.all([a, b, c].map(executed));
      assertEquals([after[0] - before[0], after[1] - before[1], after[2] - before[2]], [0, 10, 0]);
      exactlyOnce(runs, ["fetch"]);
    });

    await t.step(
      "a queue nobody serves: the step shows it is waiting, then times out per its policy",
      async () => {
        const run = await startRun(client, {
          definition: {
            id: "nobody",
            states: [{
              id: "gpu",
              type: "transform",
              expression: "{'x': 1}",
              queue: "gpu",
              timeout: "1500ms",
            }],
          },
          input: {},
        });
        const [step] = await runSteps(client, run.id);
        assertEquals(step.waiting_for, "waiting for a worker on queue gpu");
        assertEquals((await listWorkers(client)).unserved, [{ queue: "gpu", waiting: 1 }]);
        assert(await waitFor(async () => (await getRun(client, run.id)).status === "failed", 10_000));
        const ended = await getRun(client, run.id);
        assertEquals(ended.error?.code, "no_worker");
      },
    );

    await t.step(
      "kill -9 of a worker mid-step and of one NATS node: runs finish on the others, none twice",
      async () => {
        io.gate();
        const definition = fetchFlow("crash", "trio", [sum]);
        const runs = (await Promise.all(Array.from({ length: 30 }, () =>
          startRun(client, { definition, input: {} }))))
          .map((r) => r.id);
        assert(
          await waitFor(async () => (await inFlight(c)) === CONCURRENCY, 10_000),
          "worker c holds steps",
        );
        assertEquals((await c.stop("SIGKILL")).signal, "SIGKILL");
        Deno.kill(cluster!.pid(2), "SIGKILL");
        io.open();
        if (!await allCompleted(client, "crash", 30, 30_000)) {
          const left = (await listRuns(client, { workflow_id: "crash", limit: 500 })).runs
            .filter((r) => r.status !== "completed");
          const steps = left.length ? await runSteps(client, left[0].id) : [];
          throw new Error(
            `${left.length} runs not completed: ${JSON.stringify(steps)}
station: ${serve.stderr().slice(-3000)}
` +
              `a: ${a.stderr().slice(-1500)}
b: ${b.stderr().slice(-1500)}`,
          );
        }
        const reclaimed = exactlyOnce(runs, ["fetch", "sum"]);
        // c's steps ran again elsewhere after its lease (the HTTP server saw them twice); no other step did.
        assert(reclaimed.size >= 1, "c's steps were reclaimed after its lease");
        for (const run of runs) {
          const hits = io.hits.get(`${run}|fetch`)!;
          assert(hits === 1 || (hits === 2 && reclaimed.has(run)), `${run}: fetched ${hits} times`);
        }
      },
    );

    await t.step("SIGTERM of a worker: it finishes its steps first; none lost or repeated", async () => {
      io.gate();
      const definition = fetchFlow("drain", "trio", [sum]);
      const runs = (await Promise.all(Array.from({ length: 20 }, () =>
        startRun(client, { definition, input: {} }))))
        .map((r) => r.id);
      assert(await waitFor(async () => (await inFlight(b)) > 0, 10_000), "worker b holds steps");
      b.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
      io.open();
      assertEquals((await b.stop()).code, 0, b.stderr());
      assert(await allCompleted(client, "drain", 20, 20_000), "every run completes");
      assertEquals(exactlyOnce(runs, ["fetch", "sum"]).size, 0, "no step was reclaimed");
      for (const run of runs) assertEquals(io.hits.get(`${run}|fetch`), 1, `${run} fetched once`);
      // b's last heartbeat said it was draining; c's stopped: both drop out of the list after the lease.
      assert(
        await waitFor(
          async () => (await listWorkers(client)).workers.map((w) => w.name).join() === "a",
          5000,
        ),
      );
    });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await io.close();
    await cluster?.stop();
    await home.cleanup();
  }
});

Deno.test("workers: nats.replicas beyond what the NATS server can keep is a clear error at start", async () => {
  const home = await tempHome();
  const nats = await singleNats();
  try {
    const r = await runStn(["serve", "--port", "0", "--nats-url", nats.url], {
      env: { ...home.env, STN_NATS_REPLICAS: "3" },
    });
    assertEquals(r.code, 1, r.stderr);
    assert(r.stderr.includes("error: NATS cannot keep 3 replicas of the WORKFLOWS stream"), r.stderr);
    assert(r.stderr.includes("set nats.replicas (STN_NATS_REPLICAS) to at most"), r.stderr);
    assert(!r.stderr.includes("    at "), "no stack trace");
    const w = await runStn(["worker"], { env: home.env });
    assertEquals(w.code, 2, w.stderr);
    assert(w.stderr.includes("stn worker needs the NATS server or cluster its station uses"), w.stderr);
  } finally {
    await nats.stop();
    await home.cleanup();
  }
});

Deno.test("workers: a sandbox step runs on the worker's Docker Engine; its container goes when the run ends", async () => {
  const home = await tempHome();
  home.writeConfig(SANDBOX_CONFIG);
  const nats = await singleNats();
  const serve = await startServe({
    env: home.env,
    home: home.home,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const worker = startWorkerProcess({
    env: home.env,
    natsUrl: nats.url,
    name: "docker-1",
    args: ["--queue", "docker"],
  });
  try {
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      worker.stderr(),
    );
    const run = await startRun(client, {
      definition: {
        id: "sbx",
        defaults: { queue: "docker" },
        states: [{ id: "hello", type: "sandbox", command: ["sh", "-c", "echo hello from $(hostname)"] }],
      },
      input: {},
    });
    assert(
      await waitFor(async () => (await getRun(client, run.id)).status === "completed", 30_000),
      worker.stderr(),
    );
    const [step] = await runSteps(client, run.id);
    assert(
      String((step.output as { stdout: string }).stdout).startsWith("hello from "),
      JSON.stringify(step),
    );
    const backend = testBackend();
    assert(
      await waitFor(async () => (await backend.listManaged({ "dev.stn.run": run.id })).length === 0, 10_000),
      "the run's container is removed once the run ended",
    );
  } finally {
    await worker.stop();
    await serve.stop();
    await nats.stop();
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
  }
});

Deno.test("workers: SIGTERM with steps longer than --drain-timeout hands them back; another worker finishes them", async () => {
  const home = await tempHome();
  const nats = await singleNats();
  const io = await delayServer(2500);
  const env = { ...home.env, STN_ENGINE_LEASE: "10s" };
  const serve = await startServe({
    env,
    home: home.home,
    main: HTTP_STN,
    args: ["--port", "0", "--nats-url", nats.url, "--no-local-workers"],
  });
  const quick = startWorkerProcess({
    env,
    natsUrl: nats.url,
    name: "quick",
    args: ["--drain-timeout", "1", "--port", "0"],
  });
  let other: ReturnType<typeof startWorkerProcess> | undefined;
  try {
    const client = new StationClient(serve.url);
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 1, 20_000),
      quick.stderr(),
    );
    const definition = { id: "long", states: [{ id: "fetch", type: "http_get", url: io.url }] };
    const runs = (await Promise.all(Array.from({ length: 3 }, () =>
      startRun(client, { definition, input: {} }))))
      .map((r) => r.id);
    assert(await waitFor(() => io.total() === 3, 10_000), "quick holds the three steps");
    other = startWorkerProcess({ env, natsUrl: nats.url, name: "other" });
    assert(
      await waitFor(async () => (await listWorkers(client)).workers.length === 2, 20_000),
      other.stderr(),
    );
    const t0 = Date.now();
    assertEquals((await quick.stop("SIGTERM")).code, 0, quick.stderr());
    assert(Date.now() - t0 < 2500, "the drain gives up after --drain-timeout, not when the steps end");
    // Handed back: their leases (10 s) lapsed at once, so the other worker runs them well before that.
    assert(await allCompleted(client, "long", 3, 8000), "the other worker finished the handed-back steps");
    const reclaimed = exactlyOnceIn(home.path("stn.db"), runs, ["fetch"]);
    assertEquals(reclaimed.size, 3, "each step was reclaimed from the stopped worker");
  } finally {
    await other?.stop();
    await quick.stop().catch(() => {});
    await serve.stop();
    await io.close();
    await nats.stop();
    await home.cleanup();
  }
});
