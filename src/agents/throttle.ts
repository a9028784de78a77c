/**
 * Model-call flow control (`ai.limits`, docs/configuration.md#flow-control): a limited model's call asks for
 * a permit before it goes (ModelLimits on the station's ledger, or the station over NATS on a `stn worker`),
 * waits as long as it is told, says when it ended and how many tokens it used, and waits out a provider's
 * 429/503 `Retry-After` (or a backoff) — reported, so every caller of the model backs off — instead of failing.
 */

import { APICallError } from "ai";
import { ulid } from "ulid";
import { sleep } from "../lib/async.ts";
import { LEASE_MS, type ThrottleWait } from "./model_limits.ts";

type Awaitable<T> = T | Promise<T>;

/** Where model-call permits come from: the ledger (ModelLimits) or, on a worker, the station. */
export interface ModelPermits {
  /** Whether `ai.limits` applies to the model. */
  limited(model: string): boolean;
  /** Undefined: call `id` may go now; else how long to wait before asking again (asking again is safe). */
  acquire(id: string, model: string): Awaitable<ThrottleWait | undefined>;
  /** Keeps an in-flight call's place while the model answers. */
  renew(id: string): Awaitable<void>;
  /** The call ended, having used `tokens`. */
  release(id: string, tokens: number): Awaitable<void>;
  /** Holds every call of the model for `ms` (a provider's Retry-After); returns the limit keys held. */
  block(model: string, ms: number): Awaitable<string[]>;
  /** Resolves when any call ends next, or never once `signal` aborts (without it, held calls poll). */
  released?(signal: AbortSignal): Promise<void>;
}

/**
 * How long a call held by concurrency waits for word that a call ended before it asks anyway: a caller that
 * died never says its call ended, and its place is freed only when its lease lapses.
 */
const HELD_MS = 5_000;

/**
 * Asks for call `id`'s permit until it may go, waiting as told between asks. A call held by concurrency asks
 * again as soon as a call ends, where the permits can say so, instead of every 500 ms.
 */
async function permit(
  p: ModelPermits,
  id: string,
  model: string,
  { signal, onWait }: { signal: AbortSignal; onWait: (w: ThrottleWait) => Promise<void> },
): Promise<void> {
  for (;;) {
    const asked = new AbortController();
    const listening = AbortSignal.any([signal, asked.signal]);
    // Listening before asking: a call that ends while the answer is on its way still wakes this one.
    const ended = p.released?.(listening);
    try {
      const w = await p.acquire(id, model);
      if (!w) return;
      await onWait(w);
      await (w.reason === "concurrency" && ended
        ? Promise.race([sleep(Math.max(w.wait_ms, HELD_MS), listening), ended])
        : sleep(w.wait_ms, signal));
    } finally {
      asked.abort();
    }
  }
}

/** The longest single wait on a provider's say-so (a longer Retry-After is waited out in steps of this). */
const MAX_WAIT_MS = 60_000;

/** A model call's Retry-After (`retry-after-ms`, `retry-after` seconds or date) on a 429/503, else undefined. */
export function retryAfterMs(err: unknown, now: number): number | undefined {
  const e = (err as { lastError?: unknown })?.lastError ?? err;
  if (!APICallError.isInstance(e) || (e.statusCode !== 429 && e.statusCode !== 503)) return undefined;
  const h = e.responseHeaders ?? {};
  const ms = Number.parseFloat(h["retry-after-ms"] ?? "");
  if (Number.isFinite(ms)) return Math.max(0, ms);
  const after = h["retry-after"];
  if (after === undefined) return 0;
  const secs = Number.parseFloat(after);
  return Math.max(0, Number.isFinite(secs) ? secs * 1000 : Date.parse(after) - now);
}

/** Runs the model calls of the models `ai.limits` names when their permits allow. */
export class ModelThrottle {
  #permits: ModelPermits;

  constructor(permits: ModelPermits) {
    this.#permits = permits;
  }

  /** Whether `ai.limits` applies to the model (its calls then go through `call`). */
  limited(model: string): boolean {
    return this.#permits.limited(model);
  }

  /**
   * Runs one model call once its permit allows, and again after a 429/503 (waiting its Retry-After or a
   * backoff), until it answers otherwise or `signal` aborts. `onWait` hears each wait whose reason differs
   * from the one before (one run event per reason, not one per poll).
   */
  async call<T>(
    model: string,
    run: { signal: AbortSignal; onWait: (w: ThrottleWait) => Awaitable<unknown> },
    fn: () => Promise<{ value: T; tokens: number }>,
  ): Promise<T> {
    const p = this.#permits;
    let last: string | undefined;
    const said = async (w: ThrottleWait) => {
      if (w.reason !== last) await run.onWait(w);
      last = w.reason;
    };
    for (let failures = 0;; failures++) {
      const id = ulid();
      await permit(p, id, model, { signal: run.signal, onWait: said });
      // A call longer than the lease keeps its place in the concurrency count.
      const renewal = setInterval(() => void Promise.resolve(p.renew(id)).catch(() => {}), LEASE_MS / 3);
      let out: { value: T; tokens: number };
      try {
        out = await fn();
      } catch (err) {
        clearInterval(renewal);
        await p.release(id, 0);
        const after = retryAfterMs(err, Date.now());
        if (after === undefined) throw err;
        const ms = Math.min(MAX_WAIT_MS, after || 1000 * 2 ** failures);
        const status = (((err as { lastError?: unknown }).lastError ?? err) as APICallError).statusCode;
        const [key] = await p.block(model, ms);
        last = undefined;
        await said({ key: key ?? model, reason: "retry_after", wait_ms: ms, status });
        await sleep(ms, run.signal);
        continue;
      }
      clearInterval(renewal);
      await p.release(id, out.tokens);
      return out.value;
    }
  }
}
