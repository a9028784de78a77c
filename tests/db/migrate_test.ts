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
