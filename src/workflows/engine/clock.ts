/** Where the engine reads the time: every time decision goes through one, so tests can pin it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls fn right after the clock jumps ahead (a virtual clock in tests, `src/testing/virtual_clock.ts`), so
   * whoever armed a wall-clock timeout for a due time looks again at once. Returns the unsubscribe. A clock
   * that never jumps (the wall clock) has none.
   */
  onJump?(fn: () => void): () => void;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** An instant as the ledger stores it (ISO 8601, UTC). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
