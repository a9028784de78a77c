/**
 * Retries and forks under kill -9 (issue 32): a bulk retry of 50 failed runs with the station killed in the
 * middle, run again after the restart and once more, retries each run exactly once and completes each step once;
 * a fork interrupted by a kill completes after the restart with its reused step copied once.
 */
import { DatabaseSync } from "node:sqlite";
import { StationClient } from "../../src/client/http.ts";
import { forkRun, getRun, listRuns, runEvents, runSteps, startRun } from "../../src/client/workflow_runs.ts";
import { saveWorkflow } from "../../src/client/workflows.ts";
import type { RunEvent, Step } from "../../src/contract/runs.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

const batch = (calc: string) => ({
  id: "batch",
  states: [
    { id: "prep", type: "inject", data: { m: 2 }, resultPath: "prep", next: "calc" },
    { id: "calc", type: "transform", expression: calc, next: "nap" },
    { id: "nap", type: "timer", duration: "1s", next: "done" },
    { id: "done", type: "transform", expression: "{ 'v': calc.v }" },
  ],
});

async function events(client: StationClient, runId: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  for await (const e of runEvents(client, runId, { follow: false })) all.push(e);
  return all;
}

/** Fails unless every step of the run completed exactly once per visit. */
function completedOnce(steps: Step[], label: string): Set<string> {
  const seen = new Map<string, number>();
  for (const s of steps.filter((s) => s.status === "completed")) {
    const key = `${s.path}#${s.visit}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, n] of seen) assertEquals(n, 1, `${label}: ${key} completed ${n} times`);
  return new Set([...seen.keys()].map((k) => k.split("#")[0]));
}

async function countFailed(client: StationClient): Promise<number> {
  return (await listRuns(client, { workflow_id: "batch", status: "failed", limit: 500 })).runs.length;
}

Deno.test("crash: a bulk retry of 50 runs killed with kill -9, run twice more, retries each run once; a killed fork completes", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_ENGINE_LEASE: "2s", STN_ENGINE_ACK_WAIT: "3s" };
  let serve = await startServe({ env, home: home.home });
  try {
    let client = new StationClient(serve.url);
    await saveWorkflow(client, batch(`{ 'v': n * prep.m + "x" }`));
    const ids: string[] = [];
    for (let n = 0; n < 50; n++) {
      ids.push((await startRun(client, { workflow_id: "batch", input: { n } })).id);
    }
    assert(await waitFor(async () => (await countFailed(client)) === 50, 60_000), "all 50 runs fail at calc");
    await saveWorkflow(client, batch(`{ 'v': n * prep.m }`));

    const retry = [
      "workflow",
      "retry",
      "--failed",
      "--workflow",
      "batch",
      "--since",
      "1h",
      "--yes",
      "--json",
    ];
    const dry = await runStn([...retry, "--dry-run"], { env });
    assertEquals(dry.code, 0, dry.stderr);
    assertEquals(
      JSON.parse(dry.stdout).runs.filter((r: { outcome: string }) => r.outcome === "would_retry").length,
      50,
    );
    assertEquals(await countFailed(client), 50, "a dry run retries nothing");

    // Kill as soon as the ledger holds the first retry, so the kill lands inside the bulk retry when it can.
    const ledger = new DatabaseSync(home.path("stn.db"), { readOnly: true });
    const retriedNow = () =>
      (ledger.prepare("SELECT COUNT(*) AS n FROM run_events WHERE type = 'run_retried'").get() as {
        n: number;
      }).n;
    const first = runStn(retry, { env });
    const deadline = Date.now() + 30_000;
    while (retriedNow() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    const atKill = retriedNow();
    ledger.close();
    const interrupted = await first;
    serve = await startServe({ env, home: home.home });
    client = new StationClient(serve.url);

    const second = await runStn(retry, { env });
    assertEquals(second.code, 0, second.stderr);
    const third = await runStn(retry, { env });
    assertEquals(third.code, 0, third.stderr);
    assertEquals(JSON.parse(third.stdout).retried, 0, "a repeated bulk retry retries nothing more");
    const again = JSON.parse(second.stdout).retried;
    console.log(
      `kill -9 after ${atKill}/50 retries (first command exit ${interrupted.code}); the second retried ${again}`,
    );
    // The second command retried exactly the runs the killed one had not (a run retried twice would fail below).
    assertEquals(atKill + again, 50);

    const ended = async () => {
      for (const id of ids) if ((await getRun(client, id)).status !== "completed") return false;
      return true;
    };
    assert(await waitFor(ended, 60_000), "every retried run completes after the restart");
    for (const [n, id] of ids.entries()) {
      const run = await getRun(client, id);
      assertEquals(run.result, { v: n * 2 }, id);
      assertEquals(
        (await events(client, id)).filter((e) => e.type === "run_retried").length,
        1,
        `${id} retried once`,
      );
      assertEquals(completedOnce(await runSteps(client, id), id), new Set(["prep", "calc", "nap", "done"]));
    }

    // A fork killed before it ran: after the restart it completes; prep is reused, the rest runs once.
    const fork = await forkRun(client, ids[7], { from: "calc", input: { n: 100 } });
    assertEquals((await serve.stop("SIGKILL")).signal, "SIGKILL");
    serve = await startServe({ env, home: home.home });
    client = new StationClient(serve.url);
    assert(await waitFor(async () => (await getRun(client, fork.id)).status === "completed", 30_000));
    assertEquals((await getRun(client, fork.id)).result, { v: 200 });
    const steps = await runSteps(client, fork.id);
    assertEquals(completedOnce(steps, fork.id), new Set(["prep", "calc", "nap", "done"]));
    assertEquals(steps.filter((s) => s.reused).map((s) => s.path), ["prep"]);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
