/** VirtualTime: a station's skipped time — its clock jumps to the next due timer whenever nothing else can happen. */

import { sleep } from "../lib/async.ts";
import type { Quiescence } from "./quiescence.ts";
import type { VirtualClock } from "./virtual_clock.ts";

/** What `during` does besides waiting. */
export interface DuringOptions {
  /**
   * Asked each time the station is idle, before the clock jumps: deliver what the waiter has to deliver now
   * (an approval decision, a signal, an event for a step that waits) and return true, so the clock stays
   * until the station is idle again; false lets it jump.
   */
  beforeSkip?: () => boolean | Promise<boolean>;
}

interface Waiter extends DuringOptions {
  fail(err: unknown): void;
}

/** Wall time the driver waits when the station is idle and no timer is due (only an outside input helps). */
const NOTHING_DUE_MS = 10;

/**
 * Skipped time for a station started with `time: "virtual"` (docs/testing.md#skipped-time). While someone
 * waits through `during`, the clock jumps to the earliest due timer (a `timer` step, a retry backoff, an
 * approval or await timeout, a fanout's timeout, a workflow or agent schedule) as soon as the station is
 * quiescent and no waiter has anything to deliver; without a waiter it runs like the wall clock (so a cron
 * schedule does not fire on and on while nothing waits). Never past a due timer, never while work that could
 * set an earlier one is going on.
 */
export class VirtualTime {
  /** The station's clock (the engine, schedulers and agent ledger read it). */
  readonly clock: VirtualClock;
  #quiet: Quiescence;
  #waiters = new Set<Waiter>();
  #driving = false;
  #stopped = false;
  /** Aborted at stop, so a driver waiting for quiescence stops polling a station that is closing its ledger. */
  #stopping = new AbortController();

  constructor(clock: VirtualClock, quiescence: Quiescence) {
    this.clock = clock;
    this.#quiet = quiescence;
  }

  /** Why the station is not idle now, else null. */
  busy(): string | null {
    return this.#quiet.busy();
  }

  /** When the station's next timer is due (null: nothing will happen unless something from outside does). */
  nextDue(): number | null {
    return this.#quiet.nextDue();
  }

  /** Waits for `work`, skipping time whenever the station is idle meanwhile; returns what `work` resolves to. */
  async during<T>(work: Promise<T>, options: DuringOptions = {}): Promise<T> {
    let fail!: (err: unknown) => void;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    const waiter: Waiter = { beforeSkip: options.beforeSkip, fail };
    this.#waiters.add(waiter);
    void this.#drive();
    try {
      return await Promise.race([work, failed]);
    } finally {
      this.#waiters.delete(waiter);
    }
  }

  /** Stops skipping (the station is stopping). */
  stop(): void {
    this.#stopped = true;
    this.#stopping.abort();
  }

  #jump(): number | null {
    const next = this.#quiet.nextDue();
    if (next === null || next <= this.clock.now()) return null;
    this.clock.jumpTo(next);
    return next;
  }

  /** One driver for every waiter: quiescent → ask the waiters → jump, while anyone waits. */
  async #drive(): Promise<void> {
    if (this.#driving) return;
    this.#driving = true;
    try {
      while (this.#waiters.size > 0 && !this.#stopped) {
        try {
          await this.#quiet.settled(this.#stopping.signal);
        } catch (err) {
          if (this.#stopped) break;
          throw err;
        }
        if (this.#waiters.size === 0 || this.#stopped) break;
        let delivered = false;
        const asked = [...this.#waiters];
        for (const w of asked) {
          try {
            if (w.beforeSkip && await w.beforeSkip()) delivered = true;
          } catch (err) {
            // Its `during` rejects with the error; the other waiters go on.
            this.#waiters.delete(w);
            w.fail(err);
          }
        }
        // A delivery, or work that began while the waiters were asked: quiescence first, again.
        // A waiter that came while the others were asked has not been asked: it may have something due now.
        const newcomer = [...this.#waiters].some((w) => !asked.includes(w));
        if (this.#stopped) break;
        if (delivered || newcomer || this.#quiet.busy() !== null) continue;
        // Cut short by a stop, the sleep rejects; the loop's condition then sees the stop.
        if (this.#jump() === null) await sleep(NOTHING_DUE_MS, this.#stopping.signal).catch(() => undefined);
      }
    } finally {
      this.#driving = false;
    }
  }
}
