/**
 * The file reaper: deletes files past their expiry, at start and every storage.cleanup.interval, and
 * `stn files prune`. It keeps no state of its own — each file's expiry is in its object headers or
 * follows from its session's close in the ledger — so a restart loses nothing: the next start sweeps.
 */

import { errorMessage } from "../errors.ts";
import { log } from "../log.ts";
import { countFilesReaped } from "../telemetry/metrics.ts";
import type { FileInfo, FileStore } from "./store.ts";

/** What a sweep found (and, unless a dry run, deleted). */
export interface PruneReport {
  dry_run: boolean;
  files: Pick<FileInfo, "key" | "size_bytes" | "expires_at">[];
  count: number;
  bytes: number;
}

/** Deletes expired files on a timer and on demand; sweeps never overlap. */
export class FileReaper {
  readonly #files: FileStore;
  #timer?: ReturnType<typeof setInterval>;
  #sweeping?: Promise<PruneReport>;

  constructor(files: FileStore) {
    this.#files = files;
  }

  /**
   * Deletes every expired file (or, with dryRun, only lists them). Idempotent: a file deleted by another
   * sweep or station in the meantime is skipped, and one re-uploaded since is kept.
   */
  async prune(opts: { dryRun?: boolean } = {}): Promise<PruneReport> {
    if (opts.dryRun) return report(true, await this.#files.expired());
    // A sweep already running answers for this one too: both would delete the same files.
    return await (this.#sweeping ??= this.#sweep().finally(() => (this.#sweeping = undefined)));
  }

  async #sweep(): Promise<PruneReport> {
    const now = Date.now();
    const removed: FileInfo[] = [];
    for (const f of await this.#files.expired(now)) {
      if (await this.#files.purgeExpired(f.key, now)) removed.push(f);
    }
    const result = report(false, removed);
    if (result.count > 0) {
      countFilesReaped(result.count, result.bytes);
      log.info("removed expired files", {
        count: result.count,
        bytes: result.bytes,
        bucket: this.#files.bucket,
      });
    }
    // Checked after deleting, so a warning means the bucket is full of files that are still wanted.
    await this.#files.quota();
    return result;
  }

  /** Sweeps now and then every intervalMs until stop(). */
  start(intervalMs: number): void {
    if (this.#timer !== undefined) return;
    const sweep = () =>
      this.prune().catch((err) => log.warn("file reaper failed", { error: errorMessage(err) }));
    sweep();
    this.#timer = setInterval(sweep, intervalMs);
    Deno.unrefTimer(this.#timer);
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping?.catch(() => {});
  }
}

function report(dry_run: boolean, files: FileInfo[]): PruneReport {
  return {
    dry_run,
    files: files.map(({ key, size_bytes, expires_at }) => ({ key, size_bytes, expires_at })),
    count: files.length,
    bytes: files.reduce((n, f) => n + f.size_bytes, 0),
  };
}
