import { DatabaseSync } from "node:sqlite";
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { openDatabase, transaction } from "../../src/db/database.ts";
import { migrate, type Migration, schemaVersion } from "../../src/db/migrate.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { tempHome } from "../helpers/home.ts";

const TEST_MIGRATIONS: Migration[] = [
  { version: 1, name: "a", sql: "CREATE TABLE a (x INTEGER)" },
  { version: 2, name: "b", sql: "CREATE TABLE b (y INTEGER); INSERT INTO a (x) VALUES (1)" },
];

Deno.test("migrations: applied once, in order, and re-opening is a no-op", async () => {
  const home = await tempHome();
  try {
    const path = home.path("t.db");
    const db1 = new DatabaseSync(path);
    assertEquals(migrate(db1, TEST_MIGRATIONS), [1, 2]);
    assertEquals(migrate(db1, TEST_MIGRATIONS), []);
    db1.close();
    const db2 = new DatabaseSync(path);
    assertEquals(migrate(db2, TEST_MIGRATIONS), []);
    assertEquals(schemaVersion(db2), 2);
    // The data a migration wrote is there exactly once.
    assertEquals((db2.prepare("SELECT COUNT(*) AS n FROM a").get() as { n: number }).n, 1);
    const rows = db2.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();
    assertEquals(rows.map((r) => [r.version, r.name]), [[1, "a"], [2, "b"]]);
    db2.close();
  } finally {
    await home.cleanup();
  }
});

Deno.test("migrations: a failing migration rolls back and names itself", async () => {
  const home = await tempHome();
  try {
    const db = new DatabaseSync(home.path("t.db"));
    const broken = [...TEST_MIGRATIONS, {
      version: 3,
      name: "broken",
      sql: "CREATE TABLE c (z); SELECT nope FROM nowhere",
    }];
    const err = assertThrows(() => migrate(db, broken));
    assertEquals(err.message.startsWith("migration 3 (broken) failed"), true);
    assertEquals(schemaVersion(db), 2);
    const c = db.prepare("SELECT name FROM sqlite_master WHERE name = 'c'").get();
    assertEquals(c, undefined, "the half-applied table must be rolled back");
    db.close();
  } finally {
    await home.cleanup();
  }
});

Deno.test("migrations: versions must increase", () => {
  const db = new DatabaseSync(":memory:");
  assertThrows(() => migrate(db, [TEST_MIGRATIONS[1], TEST_MIGRATIONS[0]]));
  db.close();
});

Deno.test("ledger: opens in WAL mode with every shipped migration", async () => {
  const home = await tempHome();
  try {
    const db = openDatabase(home.path("stn.db"));
    assertEquals((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
    assertEquals(schemaVersion(db), MIGRATIONS[MIGRATIONS.length - 1].version);
    db.close();
    // A second open of a migrated ledger changes nothing.
    const again = openDatabase(home.path("stn.db"));
    const count = again.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number };
    assertEquals(count.n, MIGRATIONS.length);
    again.close();
  } finally {
    await home.cleanup();
  }
});

Deno.test("ledger: transaction commits, rolls back on error, and nests with savepoints", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  const count = () => (db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n;
  transaction(db, () => db.exec("INSERT INTO t VALUES (1)"));
  assertEquals(count(), 1);
  assertThrows(() =>
    transaction(db, () => {
      db.exec("INSERT INTO t VALUES (2)");
      throw new Error("boom");
    })
  );
  assertEquals(count(), 1);
  transaction(db, () => {
    db.exec("INSERT INTO t VALUES (3)");
    assertThrows(() =>
      transaction(db, () => {
        db.exec("INSERT INTO t VALUES (4)");
        throw new Error("inner");
      })
    );
  });
  assertEquals(db.prepare("SELECT v FROM t ORDER BY v").all().map((r) => r.v), [1, 3]);
  db.close();
});

Deno.test("migration 29: agent_runs is rebuilt to allow waiting_for_concurrency; its turns, events and links stay", async () => {
  const home = await tempHome();
  try {
    const db = new DatabaseSync(home.path("stn.db"));
    db.exec("PRAGMA foreign_keys = ON");
    const before = MIGRATIONS.filter((m) => m.version < 29);
    migrate(db, before);
    db.exec(`INSERT INTO agent_runs (id, agent, environment, model, task, variables, plan, status, created_at,
               started_at, trigger, cost_usd)
             VALUES ('arun_1', 'a', 'default', 'm', 't', '{}', '{}', 'completed', 'x', 'x', 'schedule', 0.5);
             INSERT INTO agent_runs (id, agent, environment, model, task, variables, plan, status, parent_run_id,
               created_at, started_at)
             VALUES ('arun_2', 'a', 'default', 'm', 't', '{}', '{}', 'running', 'arun_1', 'x', 'x');
             INSERT INTO agent_run_events (run_id, seq, type, time) VALUES ('arun_1', 1, 'run_started', 'x');
             UPDATE agent_runs SET queue = 'gpu', owner = 'w1', lease_until = 5, claims = 2 WHERE id = 'arun_2';`);
    assertThrows(() =>
      db.exec(`UPDATE agent_runs SET status = 'waiting_for_concurrency' WHERE id = 'arun_2'`)
    );
    assertEquals(migrate(db, MIGRATIONS).includes(29), true);
    assertEquals((db.prepare("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys, 1);
    db.exec(`UPDATE agent_runs SET status = 'waiting_for_concurrency' WHERE id = 'arun_2'`);
    const rows = db.prepare("SELECT id, status, parent_run_id, trigger, cost_usd FROM agent_runs ORDER BY id")
      .all();
    assertEquals(rows.map((r) => ({ ...r })), [
      { id: "arun_1", status: "completed", parent_run_id: null, trigger: "schedule", cost_usd: 0.5 },
      {
        id: "arun_2",
        status: "waiting_for_concurrency",
        parent_run_id: "arun_1",
        trigger: "manual",
        cost_usd: null,
      },
    ]);
    // Migration 28's columns (a run's task queue and claim) come through the rebuild.
    assertEquals(
      { ...db.prepare("SELECT queue, owner, lease_until, claims FROM agent_runs WHERE id = 'arun_2'").get() },
      { queue: "gpu", owner: "w1", lease_until: 5, claims: 2 },
    );
    // The children still point at the rebuilt table: deleting a run cascades as before.
    db.exec("DELETE FROM agent_runs WHERE id = 'arun_1'");
    assertEquals((db.prepare("SELECT COUNT(*) AS n FROM agent_runs").get() as { n: number }).n, 0);
    assertEquals((db.prepare("SELECT COUNT(*) AS n FROM agent_run_events").get() as { n: number }).n, 0);
    const indexes = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'agent_runs'",
    )
      .all().map((r) => r.name).filter((n) => !String(n).startsWith("sqlite_")).sort();
    assertEquals(indexes, [
      "agent_runs_by_agent",
      "agent_runs_by_parent_call",
      "agent_runs_by_status",
      "agent_runs_by_step_attempt",
      "agent_runs_queued",
    ]);
    db.close();
  } finally {
    await home.cleanup();
  }
});
