import { assertEquals } from "../helpers/assert.ts";
import { type Checkpointer, type CheckpointerOptions, startCheckpointer } from "../../src/db/checkpoint.ts";
import { type Database, openDatabase, transaction } from "../../src/db/database.ts";
import { tempHome } from "../helpers/home.ts";

const MiB = 1024 * 1024;

const autoCheckpoint = (db: Database) =>
  (db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

/**
 * A ledger of blobs with a checkpointer: `write(mib)` commits that many MiB in 128 KiB commits, `grown(mib)`
 * waits (5 s at most) for the database file to have grown by that much since it opened, and says if it did.
 */
async function withLedger(
  options: CheckpointerOptions,
  fn: (
    l: { db: Database; write(mib: number): void; grown(mib: number): Promise<boolean>; size(): number },
  ) => Promise<void>,
): Promise<void> {
  const home = await tempHome();
  const path = home.path("stn.db");
  const db = openDatabase(path);
  let checkpointer: Checkpointer | undefined;
  try {
    checkpointer = startCheckpointer(db, path, options);
    db.exec("CREATE TABLE blobs (v BLOB)");
    const insert = db.prepare("INSERT INTO blobs (v) VALUES (?)");
    const before = Deno.statSync(path).size;
    const size = () => Deno.statSync(path).size;
    await fn({
      db,
      size,
      write: (mib) => {
        for (let i = 0; i < mib * 8; i++) transaction(db, () => insert.run(new Uint8Array(MiB / 8)));
      },
      grown: async (mib) => {
        for (let i = 0; i < 100 && size() < before + mib * MiB; i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        return size() >= before + mib * MiB;
      },
    });
  } finally {
    checkpointer?.stop();
    assertEquals(autoCheckpoint(db), 1000);
    db.close();
    await home.cleanup();
  }
}

Deno.test("ledger checkpointer: a worker moves the WAL into the database file; commits on the main connection never checkpoint", async () => {
  await withLedger({ intervalMs: 50, startAtBytes: 0 }, async ({ db, write, grown }) => {
    assertEquals(autoCheckpoint(db), 0);
    // 8 MiB in 64 commits: well past the 1,000 WAL pages at which a commit would checkpoint itself.
    write(8);
    assertEquals(await grown(8), true, "the database file holds the 8 MiB");
  });
});

Deno.test("ledger checkpointer: the worker starts once the WAL reaches its size; until then nothing checkpoints", async () => {
  await withLedger({ intervalMs: 50, startAtBytes: 8 * MiB }, async ({ write, grown, size }) => {
    const before = size();
    // 5 MiB: under the start size, and past the 1,000 pages at which a commit would checkpoint itself.
    write(5);
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(size(), before, "nothing was checkpointed before the WAL reached 8 MiB");
    write(5);
    assertEquals(await grown(9), true, "the worker checkpointed once the WAL passed 8 MiB");
  });
});
