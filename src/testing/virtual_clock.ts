/** VirtualClock: a clock that runs with the wall clock and jumps ahead when told (skipped time in tests). */

import type { Clock } from "../workflows/engine/clock.ts";

/**
 * The wall clock plus an offset that only grows: between jumps time passes as it really does (a step that
 * takes 40 ms takes 40 ms of virtual time too), and `jumpTo` moves it ahead at once — to the next due timer,
 * when a station under virtual time is idle (`virtual_time.ts`). Never goes backwards.
 */
export class VirtualClock implements Clock {
  #offset: number;
  #listeners = new Set<() => void>();

  /** Starts at `start` (ms since the epoch; default: the wall clock's now). */
  constructor(start: number = Date.now()) {
    this.#offset = start - Date.now();
  }

  /** Milliseconds since the epoch, on this clock. */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** How far this clock is ahead of the wall clock (ms). */
  get skipped(): number {
    return this.#offset;
  }

  /** Moves the clock ahead to `at` (nothing when that is not ahead), then tells the jump listeners. */
  jumpTo(at: number): void {
    const ahead = at - this.now();
    if (ahead <= 0) return;
    this.#offset += ahead;
    for (const fn of this.#listeners) fn();
  }

  /** Calls fn after every jump; returns the unsubscribe. */
  onJump(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}
