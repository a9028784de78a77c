import { assertEquals } from "../helpers/assert.ts";
import { startCheckpointer } from "../../src/db/checkpoint.ts";
import { openDatabase, transaction } from "../../src/db/database.ts";
import { tempHome } from "../helpers/home.ts";

const autoCheckpoint = (db: ReturnType<typeof openDatabase>) =>
  (db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

Deno.test("ledger checkpointer: a worker moves the WAL into the database file; commits on the main connection never checkpoint", async () => {
  const home = await tempHome();
  const path = home.path("stn.db");
  const db = openDatabase(path);
  const checkpointer = startCheckpointer(db, path, { intervalMs: 50, startAtBytes: 0 });
  try {
    assertEquals(autoCheckpoint(db), 0);
    db.exec("CREATE TABLE blobs (v BLOB)");
    const insert = db.prepare("INSERT INTO blobs (v) VALUES (?)");
    const before = Deno.statSync(path).size;
    // 8 MiB in 64 commits: well past the 1,000 WAL pages at which a commit would checkpoint itself.
    for (let i = 0; i < 64; i++) transaction(db, () => insert.run(new Uint8Array(128 * 1024)));
    let size = Deno.statSync(path).size;
    for (let i = 0; i < 100 && size < before + 8 * 1024 * 1024; i++) {
      await new Promise((r) => setTimeout(r, 50));
      size = Deno.statSync(path).size;
    }
    assertEquals(size >= before + 8 * 1024 * 1024, true, `database file ${size} bytes`);
  } finally {
    checkpointer.stop();
    assertEquals(autoCheckpoint(db), 1000);
    db.close();
    await home.cleanup();
  }
});

Deno.test("ledger checkpointer: the worker starts once the WAL reaches its size; until then nothing checkpoints", async () => {
  const home = await tempHome();
  const path = home.path("stn.db");
  const db = openDatabase(path);
  const checkpointer = startCheckpointer(db, path, { intervalMs: 50, startAtBytes: 8 * 1024 * 1024 });
  try {
    db.exec("CREATE TABLE blobs (v BLOB)");
    const insert = db.prepare("INSERT INTO blobs (v) VALUES (?)");
    const before = Deno.statSync(path).size;
    // 5 MiB: under the start size, and past the 1,000 pages at which a commit would checkpoint itself.
    for (let i = 0; i < 40; i++) transaction(db, () => insert.run(new Uint8Array(128 * 1024)));
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(Deno.statSync(path).size, before, "nothing was checkpointed before the WAL reached 8 MiB");
    for (let i = 0; i < 40; i++) transaction(db, () => insert.run(new Uint8Array(128 * 1024)));
    let size = Deno.statSync(path).size;
    for (let i = 0; i < 100 && size < before + 9 * 1024 * 1024; i++) {
      await new Promise((r) => setTimeout(r, 50));
      size = Deno.statSync(path).size;
    }
    assertEquals(size >= before + 9 * 1024 * 1024, true, `database file ${size} bytes`);
  } finally {
    checkpointer.stop();
    assertEquals(autoCheckpoint(db), 1000);
    db.close();
    await home.cleanup();
  }
});
