/** The ledger's WAL checkpoints, moved to a worker thread so no commit pays for one. */

import { log } from "../log.ts";
import type { Database } from "./database.ts";

/** SQLite's default: a commit that finds this many WAL pages checkpoints them itself. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * The WAL size at which the worker starts: a quarter of the pages at which a commit would checkpoint itself.
 * It replaced a start 2 s after the ledger opened, before which a busy station's commits still checkpointed
 * on the main thread: the engine benchmark's chain, run in those 2 s, saw a 4–7 ms step every ~110 steps.
 */
const START_AT_BYTES = 1 << 20;
/** How often the WAL's size is looked at until the worker starts (ms): a stat, a few µs. */
const WATCH_MS = 20;

/** A background checkpointer of one ledger; stop() before closing the ledger. */
export interface Checkpointer {
  stop(): void;
}

export interface CheckpointerOptions {
  /** How often the worker checkpoints (ms). */
  intervalMs?: number;
  /**
   * How large the WAL grows before the worker starts (bytes): a one-shot embedded command whose few commits
   * never write this much does not pay for a thread it would not use (closing the ledger checkpoints them).
   */
  startAtBytes?: number;
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
  const { intervalMs = 250, startAtBytes = START_AT_BYTES } = options;
  let worker: Worker | undefined;
  let stopped = false;
  const restoreAuto = () => {
    if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  const start = () => {
    if (stopped || worker) return;
    clearInterval(watch);
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
    worker.postMessage({ path, intervalMs });
  };
  const walBytes = () => {
    try {
      return Deno.statSync(`${path}-wal`).size;
    } catch {
      return 0; // no WAL yet
    }
  };
  // Until the worker starts no commit checkpoints either: the WAL waits for it, or for the ledger's close.
  db.exec("PRAGMA wal_autocheckpoint = 0");
  let watch: ReturnType<typeof setInterval> | undefined;
  if (walBytes() >= startAtBytes) start();
  else {
    watch = setInterval(() => walBytes() >= startAtBytes && start(), WATCH_MS);
    Deno.unrefTimer(watch);
  }
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(watch);
      worker?.terminate();
      restoreAuto();
    },
  };
}
