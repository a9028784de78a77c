import { openDatabase, transaction } from "../../src/db/database.ts";
import { walDurability } from "../../src/db/durability.ts";
import { assertEquals } from "../helpers/assert.ts";

Deno.test("ledger.durability fsync: commits that wait together share one WAL sync; nothing new, no sync", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-durability-" });
  const db = openDatabase(`${dir}/station.db`);
  const sync = walDurability(db, `${dir}/station.db`);
  try {
    db.exec("CREATE TABLE t (v INTEGER)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    transaction(db, () => insert.run(1));
    await sync.durable();
    assertEquals(sync.syncs, 1);
    await sync.durable();
    assertEquals(sync.syncs, 1, "no commit since the last sync: none needed");
    // Ten commits, each waiting as soon as it is written: the first starts a sync, the nine written while it
    // runs share the next one.
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 10; i++) {
      transaction(db, () => insert.run(i));
      waits.push(sync.durable());
    }
    await Promise.all(waits);
    assertEquals(sync.syncs, 3);
    assertEquals((db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n, 11);
  } finally {
    sync.close();
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
