import type { Context } from "hono";
import { REPLAYED_HEADER } from "../contract/headers.ts";
import type { IdempotencyKeys, KeyedStart } from "../db/idempotency_keys.ts";

/** The claim a start makes on its key inside the transaction that creates its run. */
export type Claim = (runId: string) => string | undefined;

/** A start under its key: `read` answers a run the key already started, `start` makes a new one. */
export interface OnceStart<T> {
  keys: IdempotencyKeys;
  keyed: KeyedStart | undefined;
  read: (runId: string) => T;
  start: (claim?: Claim) => Promise<T>;
}

/**
 * Runs a start under its Idempotency-Key (none: just `start`). A key that started a run within 24 h
 * answers that run (`read`) marked `Idempotent-Replayed: true`, doing no work; else `start` runs with
 * the claim to make in its creating transaction, which also finds the run of a concurrent start with
 * the same key (answered as a replay too). A key sent with another body is 409 `idempotency_key_reused`.
 */
export async function startOnce<T>(c: Context, { keys, keyed, read, start }: OnceStart<T>): Promise<T> {
  if (!keyed) return await start();
  const found = keys.find(keyed);
  if (found) {
    c.header(REPLAYED_HEADER, "true");
    return read(found);
  }
  let replayed = false;
  const value = await start((runId) => {
    const existing = keys.claim(keyed, runId);
    replayed = existing !== undefined;
    return existing;
  });
  if (replayed) c.header(REPLAYED_HEADER, "true");
  return value;
}
