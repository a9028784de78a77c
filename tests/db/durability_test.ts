import { assertEquals } from "../helpers/assert.ts";
import { openDatabase } from "../../src/db/database.ts";
import { loadConfig } from "../../src/config/load.ts";
import { tempHome } from "../helpers/home.ts";

Deno.test("ledger.durability: fsync opens the ledger with synchronous=FULL, normal (the default) with NORMAL", async () => {
  const home = await tempHome();
  try {
    const synchronous = (durability?: "normal" | "fsync") => {
      const db = openDatabase(home.path(`${durability ?? "default"}.db`), { durability });
      try {
        return (db.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
      } finally {
        db.close();
      }
    };
    // SQLite: 1 = NORMAL, 2 = FULL.
    assertEquals([synchronous(), synchronous("normal"), synchronous("fsync")], [1, 1, 2]);

    const env = { STATION_HOME: home.home };
    assertEquals(loadConfig({ env }).values.ledger.durability, "normal");
    assertEquals(
      loadConfig({ env: { ...env, STN_LEDGER_DURABILITY: "fsync" } }).values.ledger.durability,
      "fsync",
    );
  } finally {
    await home.cleanup();
  }
});
