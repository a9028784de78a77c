/** The checkpointer's worker thread: its own connection to the ledger, checkpointing every few hundred ms. */

/// <reference lib="deno.worker" />
import { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../errors.ts";

// Runs in a worker thread (src/db/checkpoint.ts): copies the ledger's WAL into the database file with
// its own connection, so the engine's commits on the main thread never pay for a checkpoint.

self.onmessage = (e: MessageEvent<{ path: string; intervalMs: number }>) => {
  const db = new DatabaseSync(e.data.path);
  // PASSIVE never waits for the writer; a busy moment is simply retried at the next tick.
  db.exec("PRAGMA busy_timeout = 0");
  setInterval(() => {
    try {
      db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (err) {
      self.postMessage({ error: errorMessage(err) });
    }
  }, e.data.intervalMs);
};
