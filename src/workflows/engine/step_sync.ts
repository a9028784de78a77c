/** Step-level durability (`ledger.durability: step`): a claimed step starts once what it follows from is on disk. */

import { setImmediate } from "node:timers";
import type { Durability } from "../../db/durability.ts";

/** The ledger's sync as the engine sees it (src/db/durability.ts). */
export type LedgerSync = Pick<Durability, "durable" | "written" | "synced" | "syncs">;

/** Step starts, counted for tests, benchmarks and /metrics. */
export interface StartCounts {
  /** Step executions this process started (and `run` answers to `stn worker` claims). */
  started: number;
  /** Of those, the ones that started before the commits they follow from were synced (never under `step`). */
  unsynced: number;
}

/**
 * Where every step execution starts (eager, pulled from JetStream, claimed by a `stn worker`): `mark()` right
 * after the step's claim committed — the claim's transaction comes after the outcome and decisions it follows
 * from, so the WAL covers them by then — `ready()` before it runs, `started(mark)` as it starts. Under `step`,
 * `ready()` waits for one WAL sync that begins after the mark (shared by every step that waits meanwhile:
 * group commit), so a chain pays at most one sync per step; otherwise it waits for nothing. `started` checks
 * the sync counter, so a step that started ahead of its sync shows in `unsynced`.
 */
export class StepGate {
  readonly #ledger?: LedgerSync;
  readonly #counts: StartCounts;
  /** Whether steps wait for their sync (`ledger.durability: step`). */
  readonly waits: boolean;

  constructor(counts: StartCounts, ledger?: LedgerSync, waits = false) {
    this.#counts = counts;
    this.#ledger = ledger;
    this.waits = waits && ledger !== undefined;
  }

  /** The mark of the commits a step claimed just now follows from. */
  mark(): number {
    return this.#ledger?.written() ?? 0;
  }

  /** Resolves when a step claimed before this call may start (under `step`: once its commits are synced). */
  ready(): Promise<void> {
    return this.waits ? this.#ledger!.durable() : Promise.resolve();
  }

  /**
   * `ready()` for a step the station runs itself, always after a macrotask: a chain of eager steps would
   * otherwise be one unbroken run of microtasks that keeps I/O (HTTP requests, NATS messages) out until it ends.
   */
  readyHere(): Promise<void> {
    return this.waits ? this.ready() : new Promise((r) => setImmediate(r));
  }

  /** Counts a step starting now, claimed at `mark`, and whether the sync counter had reached the mark. */
  started(mark: number): void {
    this.#counts.started++;
    if ((this.#ledger?.synced ?? -1) < mark) this.#counts.unsynced++;
  }

  /** Syncs of the ledger's WAL so far. */
  get syncs(): number {
    return this.#ledger?.syncs ?? 0;
  }
}
