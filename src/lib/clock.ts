/** Where the engine reads the time: every time decision goes through one, so tests can pin it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** An instant as the ledger stores it (ISO 8601, UTC). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
