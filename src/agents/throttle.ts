/**
 * Model-call flow control (`ai.limits`, docs/configuration.md#flow-control): each limited model's calls are spaced
 * to its requests_per_minute, wait while the tokens it spent are over its tokens_per_minute, and wait out a
 * provider's 429/503 `Retry-After` (or a backoff) instead of failing. The request slots, spent tokens and
 * Retry-After deadlines are ledger rows (`model_limits`), so a wait holds for every process on the ledger and
 * after a restart; `concurrency` counts this process's calls in flight.
 */

import { APICallError } from "ai";
import type { Database } from "../db/database.ts";
import { transaction } from "../db/database.ts";
import { Statements } from "../db/statements.ts";
import { sleep } from "../lib/async.ts";
import { type Clock, systemClock } from "../lib/clock.ts";
import { countModelThrottled } from "../telemetry/metrics.ts";

/** One `ai.limits` entry. */
export interface ModelLimit {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  concurrency?: number;
}

/** Why a call waited: the limit that held it, how long, and the provider's status for a Retry-After. */
export interface ThrottleWait {
  key: string;
  reason: "requests_per_minute" | "tokens_per_minute" | "concurrency" | "retry_after";
  wait_ms: number;
  status?: number;
}

/** The longest single wait on a provider's say-so (a longer Retry-After is waited out in steps of this). */
const MAX_WAIT_MS = 60_000;
const MINUTE = 60_000;

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

/** Spaces, counts and retries the model calls of the models `ai.limits` names. */
export class ModelThrottle {
  #sql: Statements;
  #limits: Record<string, ModelLimit>;
  #clock: Clock;
  #inFlight = new Map<string, number>();

  constructor(db: Database, limits: Record<string, ModelLimit>, clock: Clock = systemClock) {
    this.#sql = new Statements(db);
    this.#limits = limits;
    this.#clock = clock;
  }

  /** The `ai.limits` keys that apply to a model (`provider/name`, then `provider`). */
  keysOf(model: string): string[] {
    return [model, model.split("/")[0]].filter((k, i, all) => this.#limits[k] && all.indexOf(k) === i);
  }

  /**
   * Runs one model call once its limits allow, and again after a 429/503 (waiting its Retry-After or a backoff),
   * until it answers otherwise or `signal` aborts. `onWait` hears every wait before it starts.
   */
  async call<T>(
    model: string,
    run: { signal: AbortSignal; onWait: (w: ThrottleWait) => void },
    fn: () => Promise<{ value: T; tokens: number }>,
  ): Promise<T> {
    const keys = this.keysOf(model);
    for (let failures = 0;; failures++) {
      for (const key of keys) await this.#admit(key, run);
      for (const key of keys) this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
      try {
        const out = await fn();
        for (const key of keys) this.#spend(key, out.tokens);
        return out.value;
      } catch (err) {
        const after = retryAfterMs(err, this.#clock.now());
        if (after === undefined || keys.length === 0) throw err;
        const backoff = Math.min(MAX_WAIT_MS, 1000 * 2 ** failures);
        const wait = Math.min(MAX_WAIT_MS, after || backoff);
        const status = ((err as { lastError?: unknown }).lastError ?? err) as APICallError;
        for (const key of keys) this.#block(key, wait);
        await this.#wait(
          { key: keys[0], reason: "retry_after", wait_ms: wait, status: status.statusCode },
          run,
        );
      } finally {
        for (const key of keys) this.#inFlight.set(key, this.#inFlight.get(key)! - 1);
      }
    }
  }

  /** Waits until the key's limits let one more call go, and takes its request slot. */
  async #admit(key: string, run: { signal: AbortSignal; onWait: (w: ThrottleWait) => void }): Promise<void> {
    const limit = this.#limits[key];
    for (;;) {
      if (limit.concurrency !== undefined && (this.#inFlight.get(key) ?? 0) >= limit.concurrency) {
        await this.#wait({ key, reason: "concurrency", wait_ms: 250 }, run);
        continue;
      }
      const now = this.#clock.now();
      const w = transaction(this.#sql.db, () => this.#reserve(key, limit, now));
      if (!w) return;
      await this.#wait(w, run);
      // A reserved request slot is this call's once waited for; another wait reserves nothing and is checked again.
      if (w.reason === "requests_per_minute") return await this.#spaced(key, limit.requests_per_minute!, run);
    }
  }

  /**
   * Sends no sooner than one interval after the key's last call went: timers that fire late (a busy machine)
   * would otherwise let reserved slots go out together, above the rate.
   */
  async #spaced(key: string, rpm: number, run: { signal: AbortSignal }): Promise<void> {
    for (;;) {
      const now = this.#clock.now();
      const wait = transaction(this.#sql.db, () => {
        const { sent_ms } = this.#sql.get<{ sent_ms: number }>(
          "SELECT sent_ms FROM model_limits WHERE key = ?",
          key,
        )!;
        const due = sent_ms + MINUTE / rpm;
        if (due > now) return due - now;
        this.#sql.run("UPDATE model_limits SET sent_ms = ? WHERE key = ?", now, key);
        return 0;
      });
      if (wait === 0) return;
      await sleep(wait, run.signal);
    }
  }

  /** Takes the next request slot when the tokens and Retry-After allow (inside a transaction); else why not. */
  #reserve(key: string, limit: ModelLimit, now: number): ThrottleWait | undefined {
    this.#sql.run("INSERT INTO model_limits (key) VALUES (?) ON CONFLICT (key) DO NOTHING", key);
    const row = this.#sql.get<
      { next_ms: number; sent_ms: number; tokens_ms: number; blocked_until_ms: number }
    >(
      "SELECT next_ms, sent_ms, tokens_ms, blocked_until_ms FROM model_limits WHERE key = ?",
      key,
    )!;
    if (row.blocked_until_ms > now) {
      return { key, reason: "retry_after", wait_ms: row.blocked_until_ms - now };
    }
    if (limit.tokens_per_minute !== undefined && row.tokens_ms > now) {
      return { key, reason: "tokens_per_minute", wait_ms: row.tokens_ms - now };
    }
    if (limit.requests_per_minute === undefined) return undefined;
    // The slot is reserved now and waited for after the commit, so concurrent callers queue one interval apart.
    const interval = MINUTE / limit.requests_per_minute;
    const slot = Math.max(now, row.next_ms);
    this.#sql.run("UPDATE model_limits SET next_ms = ? WHERE key = ?", slot + interval, key);
    if (slot <= now && row.sent_ms + interval <= now) {
      this.#sql.run("UPDATE model_limits SET sent_ms = ? WHERE key = ?", now, key);
      return undefined;
    }
    return { key, reason: "requests_per_minute", wait_ms: Math.max(0, slot - now) };
  }

  /** Records a call's tokens: the key's token budget is paid off that much later. */
  #spend(key: string, tokens: number): void {
    const tpm = this.#limits[key].tokens_per_minute;
    if (tpm === undefined || tokens <= 0) return;
    const now = this.#clock.now();
    this.#sql.run(
      "UPDATE model_limits SET tokens_ms = MAX(tokens_ms, ?) + ? WHERE key = ?",
      now - MINUTE,
      Math.round((tokens * MINUTE) / tpm),
      key,
    );
  }

  /** Holds every call of the key for `ms` (a provider's Retry-After). */
  #block(key: string, ms: number): void {
    this.#sql.run(
      "UPDATE model_limits SET blocked_until_ms = MAX(blocked_until_ms, ?) WHERE key = ?",
      this.#clock.now() + ms,
      key,
    );
  }

  async #wait(
    wait: ThrottleWait,
    run: { signal: AbortSignal; onWait: (w: ThrottleWait) => void },
  ): Promise<void> {
    run.onWait(wait);
    countModelThrottled(wait.key, wait.reason, wait.wait_ms / 1000);
    await sleep(wait.wait_ms, run.signal);
  }
}
