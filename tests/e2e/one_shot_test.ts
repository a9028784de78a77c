import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { processAlive, runStn, spawnStn, waitFor } from "../helpers/stn.ts";
import { loadConfig } from "../../src/config/load.ts";
import { openDatabase } from "../../src/db/database.ts";
import { wholeStationNeed } from "../../src/runtime/lean_station.ts";
import { validateSource } from "../../src/workflows/definition/load.ts";

/** A local job (no agent or sandbox step) that parks on a timer between two steps. */
const JOB = `id: crash-job
states:
  - id: first
    type: inject
    data: { first: true }
    next: wait
  - id: wait
    type: timer
    duration: "\${$input.wait}"
    next: done
  - id: done
    type: inject
    data: { done: true }
    end: true
`;

const definition = (text: string) => {
  const r = validateSource(text);
  assert(r.valid, JSON.stringify(r.errors));
  return r.definition;
};

Deno.test("one-shot station: lean only for a run without agent or sandbox steps, with nothing waiting in the ledger", async () => {
  const home = await tempHome();
  const config = loadConfig({ env: home.env });
  const db = openDatabase(config.paths.db);
  try {
    const local = definition(JOB);
    assertEquals(wholeStationNeed(db, config, local), null);
    const agent = definition(
      "id: a\nstates:\n  - {id: ask, type: agent, agent: helper, task: hi, end: true}\n",
    );
    assertEquals(wholeStationNeed(db, config, agent), "the workflow has agent steps");
    // Nested steps count: a sandbox step inside a foreach.
    const nested = definition(`id: n
states:
  - id: each
    type: foreach
    itemsPath: xs
    iterator:
      states:
        - {id: box, type: sandbox, runtime: python, command: ["python", "-c", "print(1)"]}
    end: true
`);
    assertEquals(wholeStationNeed(db, config, nested), "the workflow has sandbox steps");
    const withNats = loadConfig({ env: home.env, flags: { "nats.url": "nats://127.0.0.1:4222" } });
    assertEquals(wholeStationNeed(db, withNats, local), "nats.url is set (workers may share its queues)");

    const now = new Date().toISOString();
    const insertRun = db.prepare(
      `INSERT INTO workflow_runs (id, workflow_id, definition, status, input, created_at, updated_at)
       VALUES (?, 'x', '{}', ?, '{}', ?, ?)`,
    );
    insertRun.run("r1", "completed", now, now);
    assertEquals(wholeStationNeed(db, config, local), null, "ended runs wait for nothing");
    insertRun.run("r2", "running", now, now);
    assertEquals(wholeStationNeed(db, config, local), "the ledger has workflow runs to go on with");
    db.prepare("UPDATE workflow_runs SET status = 'failed' WHERE id = 'r2'").run();
    db.prepare(
      "INSERT INTO schedules (workflow_id, version, cron, timezone, input, next_run_at) VALUES ('x', 1, '* * * * *', 'UTC', '{}', 0)",
    ).run();
    assertEquals(wholeStationNeed(db, config, local), "the ledger has workflow schedules");
  } finally {
    db.close();
    await home.cleanup();
  }
});

Deno.test("crash: kill -9 during an embedded one-shot; the next one-shot finishes that run, each step once", async () => {
  const home = await tempHome();
  const file = home.path("crash-job.workflow.yaml");
  Deno.writeTextFileSync(file, JOB);
  const ledger = () => new DatabaseSync(home.path("stn.db"), { readOnly: true });
  const read = <T>(sql: string, ...params: string[]): T[] => {
    const db = ledger();
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  try {
    const first = spawnStn(["workflow", "run", file, "--input", '{"wait":"1s"}'], { env: home.env });
    // Killed once the run is parked on its timer: `first` has run, `done` has not.
    const parked = await waitFor(() => {
      try {
        return read("SELECT 1 FROM timers WHERE status = 'pending'").length > 0;
      } catch {
        return false; // the ledger is not created yet
      }
    }, 60_000);
    assert(parked, `the run never reached its timer: ${first.stderr()}`);
    await first.stop("SIGKILL");
    const [killed] = read<{ id: string; status: string }>("SELECT id, status FROM workflow_runs");
    assertEquals(killed.status, "waiting");

    // The next one-shot finds the run to go on with: the whole station starts and finishes it.
    const config = loadConfig({ env: home.env });
    const db = ledger();
    try {
      assertEquals(
        wholeStationNeed(db, config, definition(JOB)),
        "the ledger has workflow runs to go on with",
      );
    } finally {
      db.close();
    }
    // Its own run waits longer than the killed run's overdue timer and last step take.
    const next = await runStn(["--json", "workflow", "run", file, "--input", '{"wait":"3s"}'], {
      env: home.env,
    });
    assertEquals(next.code, 0, next.stderr);
    assertEquals(JSON.parse(next.stdout).status, "completed");

    const runs = read<{ id: string; status: string; result: string }>(
      "SELECT id, status, result FROM workflow_runs ORDER BY id",
    );
    assertEquals(runs.length, 2, "no run started twice");
    assertEquals(runs.map((r) => r.status), ["completed", "completed"]);
    assertEquals(JSON.parse(runs[0].result), { done: true });
    const steps = read<{ path: string; n: number }>(
      "SELECT path, COUNT(*) AS n FROM step_attempts WHERE run_id = ? AND status = 'completed' GROUP BY path ORDER BY path",
      killed.id,
    );
    assertEquals(steps.map((s) => [s.path, s.n]), [["done", 1], ["first", 1], ["wait", 1]]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("SIGTERM (cron's timeout, Ctrl-C) during an embedded one-shot: exit 130, its nats-server stopped, the run kept", async () => {
  const home = await tempHome();
  const file = home.path("crash-job.workflow.yaml");
  Deno.writeTextFileSync(file, JOB);
  try {
    // A hang in stopping fails the test (killed: 137), it does not stall it.
    const job = spawnStn(["workflow", "run", file, "--input", '{"wait":"10m"}'], {
      env: home.env,
      killAfterMs: 30_000,
    });
    const parked = await waitFor(() => {
      try {
        const db = new DatabaseSync(home.path("stn.db"), { readOnly: true });
        try {
          return db.prepare("SELECT 1 FROM timers WHERE status = 'pending'").get() !== undefined;
        } finally {
          db.close();
        }
      } catch {
        return false; // the ledger is not created yet
      }
    }, 60_000);
    assert(parked, `the run never reached its timer: ${job.stderr()}`);
    const natsPid = (JSON.parse(Deno.readTextFileSync(home.path("run", "nats.pid"))) as { pid: number }).pid;
    // Stopped while the CLI waits on the run's quiet event stream (not as the run parks).
    await new Promise((r) => setTimeout(r, 2000));
    const status = await job.stop("SIGTERM");
    assertEquals(status.code, 130, job.stderr());
    assert(!processAlive(natsPid), "its nats-server was stopped");
    const db = new DatabaseSync(home.path("stn.db"), { readOnly: true });
    try {
      assertEquals(
        db.prepare("SELECT status FROM workflow_runs").get()?.status,
        "waiting",
        "kept for the next start",
      );
    } finally {
      db.close();
    }
  } finally {
    await home.cleanup();
  }
});
