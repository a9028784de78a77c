import { join } from "node:path";
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { openDatabase } from "../../src/db/database.ts";
import { ledgerOwner } from "../../src/lib/ledger_owner.ts";
import { stationPaths } from "../../src/config/paths.ts";
import { StationError } from "../../src/errors.ts";
import { buildStationDb, hashTree } from "../helpers/station_home.ts";

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "stn-ledger-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("ledger: Station's station.db is another program's, found without a byte changed or a file added", async () => {
  await withDir(async (dir) => {
    const db = join(dir, "station.db");
    buildStationDb(db);
    const before = await hashTree(dir);
    assertEquals(ledgerOwner(db), "other");
    // An empty -wal beside it (Station stopped cleanly) changes nothing.
    Deno.writeFileSync(`${db}-wal`, new Uint8Array(0));
    assertEquals(ledgerOwner(db), "other");
    Deno.removeSync(`${db}-wal`);
    const err = assertThrows(() => openDatabase(db), StationError) as StationError;
    assertEquals(err.code, "ledger_foreign");
    assertEquals(await hashTree(dir), before, "same files, same bytes");
  });
});

Deno.test("ledger: a new home uses stn.db beside Station's; an stn-made station.db keeps being the ledger", async () => {
  await withDir((dir) => {
    assertEquals(stationPaths(dir).db, join(dir, "stn.db"));
    buildStationDb(join(dir, "station.db"));
    assertEquals([stationPaths(dir).db, stationPaths(dir).foreignDb], [
      join(dir, "stn.db"),
      join(dir, "station.db"),
    ]);
  });
  await withDir((dir) => {
    // What an stn before stn.db made: its ledger named station.db, with stn's marker.
    const legacy = join(dir, "station.db");
    const open = openDatabase(legacy);
    // While it is open its tables may be only in the -wal: a copy of both is read.
    assertEquals(ledgerOwner(legacy), "stn");
    open.close();
    assertEquals(ledgerOwner(legacy), "stn");
    assertEquals([stationPaths(dir).db, stationPaths(dir).foreignDb], [legacy, null]);
    // Once stn.db exists it is the ledger.
    openDatabase(join(dir, "stn.db")).close();
    assertEquals(stationPaths(dir).db, join(dir, "stn.db"));
  });
});

Deno.test("ledger: a file that is not SQLite is not stn's; an empty one is stn's to create", async () => {
  await withDir((dir) => {
    const file = join(dir, "station.db");
    Deno.writeTextFileSync(file, "not a database");
    assertEquals(ledgerOwner(file), "other");
    Deno.writeTextFileSync(file, "");
    assertEquals(ledgerOwner(file), "absent");
    assertEquals(ledgerOwner(join(dir, "none.db")), "absent");
  });
});
