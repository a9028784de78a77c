import type { StatementSync } from "node:sqlite";
import type { Database } from "./database.ts";

/**
 * When the ledger's commits are on disk (`ledger.durability`, docs/configuration.md). In the `fsync` mode a
 * commit does not fsync by itself (SQLite runs with synchronous=NORMAL); whatever acknowledges a commit to the
 * outside (an API answer, a step message's ack, a worker's outcome reply) first awaits `durable()`: one
 * fdatasync of the WAL on Deno's blocking thread pool, while the engine goes on, covers every commit written
 * before it began. The WAL only grows between checkpoints, and a checkpoint syncs the WAL and then the
 * database file before SQLite writes the WAL over, so the commits that wait together share one sync
 * (group commit) and none of them is acknowledged before it would survive power loss.
 */
export interface Durability {
  /** Resolves once every commit made before the call is on disk (at once in the `normal` mode). */
  durable(): Promise<void>;
  /** Syncs of the WAL so far (each covers every commit before it). */
  readonly syncs: number;
  /** A mark of the commits written so far: it only grows (the connection's `total_changes()`). */
  written(): number;
  /** The `written()` mark every finished sync covers: a commit is on disk once this reached its mark. */
  readonly synced: number;
  close(): void;
}

/**
 * The `normal` mode: nothing waits for the disk; a commit survives a crash of stn, not of the machine. No
 * commit is ever known to be synced (`synced` stays below every mark).
 */
export const processDurability: Durability = {
  durable: () => Promise.resolve(),
  syncs: 0,
  written: () => 0,
  synced: -1,
  close() {},
};

/** The `fsync` mode for the ledger at `path` (its WAL is `<path>-wal`), opened on `db`. */
export function walDurability(db: Database, path: string): Durability {
  return new WalSync(db, `${path}-wal`);
}

class WalSync implements Durability {
  #walPath: string;
  #changes: StatementSync;
  #file?: Deno.FsFile;
  /** `total_changes()` when the last finished sync began: no commit since then, no sync needed. */
  synced = -1;
  #running?: Promise<void>;
  /** `total_changes()` when the sync in flight began: it covers every commit up to there. */
  #runningFrom = -1;
  #queued?: Promise<void>;
  syncs = 0;

  constructor(db: Database, walPath: string) {
    this.#walPath = walPath;
    this.#changes = db.prepare("SELECT total_changes() AS n");
  }

  written(): number {
    return (this.#changes.get() as { n: number }).n;
  }

  durable(): Promise<void> {
    const changes = this.written();
    if (changes === this.synced) return Promise.resolve();
    if (!this.#running) return this.#start(changes);
    if (changes <= this.#runningFrom) return this.#running; // begun after this commit was written
    // The sync in flight began before this commit was written: the next one covers it, and every commit
    // that waits meanwhile shares it.
    return this.#queued ??= this.#running.catch(() => {}).then(() => {
      this.#queued = undefined;
      return this.durable();
    });
  }

  #start(changes: number): Promise<void> {
    const run = this.#sync().then(() => {
      this.synced = Math.max(this.synced, changes);
    }).finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    this.#runningFrom = changes;
    return run;
  }

  async #sync(): Promise<void> {
    if (!this.#file) {
      try {
        this.#file = await Deno.open(this.#walPath, { read: true });
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return; // no WAL yet: every commit is in the database file
        throw err;
      }
    }
    await this.#file.syncData();
    this.syncs++;
  }

  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }
}
