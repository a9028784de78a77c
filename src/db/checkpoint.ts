/** The ledger's WAL checkpoints, moved to a worker thread so no commit pays for one. */

import { log } from "../log.ts";
import type { Database } from "./database.ts";

/** SQLite's default: a commit that finds this many WAL pages checkpoints them itself. */
const AUTO_CHECKPOINT_PAGES = 1000;

/** A background checkpointer of one ledger; stop() before closing the ledger. */
export interface Checkpointer {
  stop(): void;
}

export interface CheckpointerOptions {
  /** How often the worker checkpoints (ms). */
  intervalMs?: number;
  /**
   * How long the process runs before the worker starts (ms): a one-shot embedded command ends before it
   * and does not pay for a thread it would not use (its few commits checkpoint as SQLite always did).
   */
  delayMs?: number;
}

/**
 * Moves the ledger's WAL checkpoints off the main thread. SQLite runs them inside the COMMIT that crosses
 * 1,000 WAL pages, where they copy those pages and fsync the database file: measured in the engine
 * benchmark, ~120 of 7,800 commits took over 1 ms (up to 64 ms) and held 75% of all commit time, the
 * steps' p99 stalls. Here a worker thread checkpoints every intervalMs with its own connection and the main
 * connection never does; should the worker fail, the main connection checkpoints itself again.
 */
export function startCheckpointer(
  db: Database,
  path: string,
  options: CheckpointerOptions = {},
): Checkpointer {
  const { intervalMs = 250, delayMs = 2_000 } = options;
  let worker: Worker | undefined;
  let stopped = false;
  const restoreAuto = () => {
    if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  const start = () => {
    if (stopped) return;
    worker = new Worker(new URL("./checkpoint_worker.ts", import.meta.url).href, { type: "module" });
    worker.onerror = (e) => {
      e.preventDefault();
      if (stopped) return;
      stopped = true;
      worker?.terminate();
      restoreAuto();
      log.warn("ledger checkpoints run on the main thread again", { reason: e.message });
    };
    worker.onmessage = (e: MessageEvent<{ error: string }>) => log.debug("ledger checkpoint skipped", e.data);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    worker.postMessage({ path, intervalMs });
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (delayMs > 0) {
    const t = setTimeout(start, delayMs);
    Deno.unrefTimer(t);
    timer = t;
  } else start();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      if (worker) {
        worker.terminate();
        restoreAuto();
      }
    },
  };
}
