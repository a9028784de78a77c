/**
 * ModelLimits: the ledger's answer to "may this model call go now?" under `ai.limits`
 * (docs/configuration.md#flow-control), for the station's own calls and those of every `stn worker` (asked
 * over NATS): request slots spaced to requests_per_minute, the trailing minute's tokens under tokens_per_minute,
 * calls in flight under concurrency, and a provider's Retry-After held for everyone. Every decision is a ledger
 * row (`model_limits`, `model_calls`), so it holds across machines and survives a restart.
 */

import type { Database } from "../db/database.ts";
import { transaction } from "../db/database.ts";
import { Statements } from "../db/statements.ts";
import { type Clock, systemClock } from "../lib/clock.ts";
import { countModelThrottled } from "../telemetry/metrics.ts";

/** One `ai.limits` entry. */
export interface ModelLimit {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  concurrency?: number;
}

/** Why a call waits: the limit that holds it, how long, and the provider's status for a Retry-After. */
export interface ThrottleWait {
  key: string;
  reason: "requests_per_minute" | "tokens_per_minute" | "concurrency" | "retry_after";
  wait_ms: number;
  status?: number;
}

/**
 * The minute a limit is kept over, one second longer than the provider's: its clock counts a request when it
 * arrives, and a request sent one interval after the last may arrive a little sooner after it than that.
 */
const WINDOW_MS = 61_000;
/** How long a call's place (its slot, its concurrency) is kept without word from its caller. */
export const LEASE_MS = 30_000;
/**
 * How soon a call held by concurrency (or by calls whose usage is not known yet) asks again; a caller that can
 * hear releases (`released`) asks as soon as a call ends instead.
 */
const POLL_MS = 500;

interface KeyRow {
  next_ms: number;
  sent_ms: number;
  last_tokens: number;
  blocked_until_ms: number;
}

interface CallRow {
  slot_ms: number;
  sent_ms: number | null;
}

/** The ledger's model-call permits: asked before each call of a limited model, told when it ends. */
export class ModelLimits {
  #sql: Statements;
  #limits: Record<string, ModelLimit>;
  #clock: Clock;
  #onRelease = new Set<() => void>();

  constructor(db: Database, limits: Record<string, ModelLimit>, clock: Clock = systemClock) {
    this.#sql = new Statements(db);
    this.#limits = limits;
    this.#clock = clock;
  }

  /** The `ai.limits` keys that apply to a model (`provider/name`, then `provider`). */
  keysOf(model: string): string[] {
    return [model, model.split("/")[0]].filter((k, i, all) => this.#limits[k] && all.indexOf(k) === i);
  }

  /** Whether `ai.limits` applies to the model at all. */
  limited(model: string): boolean {
    return this.keysOf(model).length > 0;
  }

  /**
   * Whether call `id` (the caller's name for one attempt of one model call; asking again is safe) may go now:
   * undefined when it may (it is then in flight), else how long to wait before asking again. Its first ask
   * reserves its request slot, so callers go in the order they first asked, one interval apart.
   */
  acquire(id: string, model: string): ThrottleWait | undefined {
    const keys = this.keysOf(model);
    const now = this.#clock.now();
    const wait = transaction(this.#sql.db, () => {
      const waits = keys.map((key) => this.#check(key, id, now)).filter((w) => w !== undefined);
      const longest = waits.sort((a, b) => b.wait_ms - a.wait_ms)[0];
      for (const key of keys) {
        if (longest) {
          this.#sql.run(
            "UPDATE model_calls SET lease_ms = MAX(lease_ms, ?) WHERE key = ? AND id = ?",
            now + longest.wait_ms + LEASE_MS,
            key,
            id,
          );
        } else {
          this.#sql.run(
            "UPDATE model_calls SET sent_ms = COALESCE(sent_ms, ?), lease_ms = ? WHERE key = ? AND id = ?",
            now,
            now + LEASE_MS,
            key,
            id,
          );
          this.#sql.run("UPDATE model_limits SET sent_ms = MAX(sent_ms, ?) WHERE key = ?", now, key);
        }
      }
      return longest;
    });
    if (wait) countModelThrottled(wait.key, wait.reason, wait.wait_ms / 1000);
    return wait;
  }

  /** Keeps an in-flight call's place (its caller renews it while the model answers). */
  renew(id: string): void {
    this.#sql.run(
      "UPDATE model_calls SET lease_ms = ? WHERE id = ? AND done_ms IS NULL",
      this.#clock.now() + LEASE_MS,
      id,
    );
  }

  /** Calls fn after each call's release, until the returned function is called (the station tells workers). */
  onRelease(fn: () => void): () => void {
    this.#onRelease.add(fn);
    return () => this.#onRelease.delete(fn);
  }

  /** Resolves when any call ends next (a call held by concurrency may go then); never once signal aborts. */
  released(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.onRelease(() => (stop(), resolve()));
      signal.addEventListener("abort", stop, { once: true });
    });
  }

  /** Ends a call: it leaves the concurrency count and counts its tokens in the trailing minute. */
  release(id: string, tokens: number): void {
    this.#release(id, tokens);
    for (const fn of [...this.#onRelease]) fn();
  }

  #release(id: string, tokens: number): void {
    const now = this.#clock.now();
    transaction(this.#sql.db, () => {
      this.#sql.run(
        "UPDATE model_calls SET done_ms = ?, tokens = ? WHERE id = ? AND done_ms IS NULL",
        now,
        tokens,
        id,
      );
      if (tokens <= 0) return;
      this.#sql.run(
        "UPDATE model_limits SET last_tokens = ? WHERE key IN (SELECT key FROM model_calls WHERE id = ?)",
        tokens,
        id,
      );
    });
  }

  /** Holds every call of the model's keys for `ms` (a provider's Retry-After, seen by whichever caller). */
  block(model: string, ms: number): string[] {
    const until = this.#clock.now() + ms;
    const keys = this.keysOf(model);
    for (const key of keys) {
      this.#keyRow(key);
      this.#sql.run(
        "UPDATE model_limits SET blocked_until_ms = MAX(blocked_until_ms, ?) WHERE key = ?",
        until,
        key,
      );
      countModelThrottled(key, "retry_after", ms / 1000);
    }
    return keys;
  }

  /** Why call `id` may not go on `key` now (reserving its slot on its first ask), or undefined. */
  #check(key: string, id: string, now: number): ThrottleWait | undefined {
    const limit = this.#limits[key];
    const k = this.#keyRow(key);
    this.#prune(key, now);
    const rpm = limit.requests_per_minute;
    const interval = rpm === undefined ? 0 : WINDOW_MS / rpm;
    let call = this.#sql.get<CallRow>(
      "SELECT slot_ms, sent_ms FROM model_calls WHERE key = ? AND id = ?",
      key,
      id,
    );
    if (!call) {
      const slot = rpm === undefined ? now : Math.max(now, k.next_ms);
      if (rpm !== undefined) {
        this.#sql.run("UPDATE model_limits SET next_ms = ? WHERE key = ?", slot + interval, key);
      }
      this.#sql.run(
        "INSERT INTO model_calls (id, key, slot_ms, lease_ms) VALUES (?, ?, ?, ?)",
        id,
        key,
        slot,
        slot + LEASE_MS,
      );
      call = { slot_ms: slot, sent_ms: null };
    }
    // Already let go (the caller asks again after losing the answer).
    if (call.sent_ms !== null) return undefined;
    if (k.blocked_until_ms > now) return { key, reason: "retry_after", wait_ms: k.blocked_until_ms - now };
    if (call.slot_ms > now) return { key, reason: "requests_per_minute", wait_ms: call.slot_ms - now };
    // Timers that fire late (a busy machine) would otherwise let reserved slots go out together, above the rate.
    if (k.sent_ms + interval > now) {
      return { key, reason: "requests_per_minute", wait_ms: Math.ceil(k.sent_ms + interval - now) };
    }
    if (limit.concurrency !== undefined && this.#inFlight(key, id, now) >= limit.concurrency) {
      return { key, reason: "concurrency", wait_ms: POLL_MS };
    }
    if (limit.tokens_per_minute !== undefined) return this.#tokens(key, id, k.last_tokens, now);
    return undefined;
  }

  /**
   * Whether the trailing minute's tokens leave room for one more call: calls that ended count at their usage,
   * calls in flight at the largest usage seen lately (the call about to go too); until one reported its
   * usage, calls of the key go one at a time.
   */
  #tokens(key: string, id: string, lastTokens: number, now: number): ThrottleWait | undefined {
    const tpm = this.#limits[key].tokens_per_minute!;
    const calls = this.#sql.all<{ sent_ms: number; tokens: number | null }>(
      "SELECT sent_ms, tokens FROM model_calls WHERE key = ? AND id != ? AND sent_ms > ? ORDER BY sent_ms",
      key,
      id,
      now - WINDOW_MS,
    );
    const estimate = Math.max(lastTokens, ...calls.map((c) => c.tokens ?? 0));
    if (estimate === 0) {
      return calls.some((c) => c.tokens === null)
        ? { key, reason: "tokens_per_minute", wait_ms: POLL_MS }
        : undefined;
    }
    let used = calls.reduce((sum, c) => sum + (c.tokens ?? estimate), 0);
    if (used === 0 || used + estimate <= tpm) return undefined;
    // Room comes as the oldest calls leave the window (a call larger than the limit goes into an empty one).
    for (const c of calls) {
      used -= c.tokens ?? estimate;
      if (used === 0 || used + estimate <= tpm) {
        return { key, reason: "tokens_per_minute", wait_ms: Math.max(POLL_MS, c.sent_ms + WINDOW_MS - now) };
      }
    }
    return { key, reason: "tokens_per_minute", wait_ms: POLL_MS };
  }

  /** Calls of the key in flight (sent, not ended, their caller still there), other than `id`. */
  #inFlight(key: string, id: string, now: number): number {
    return this.#sql.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM model_calls WHERE key = ? AND id != ? AND sent_ms IS NOT NULL " +
        "AND done_ms IS NULL AND lease_ms > ?",
      key,
      id,
      now,
    )!.n;
  }

  /** Forgets waiting calls whose caller is gone and calls that left the window. */
  #prune(key: string, now: number): void {
    this.#sql.run(
      "DELETE FROM model_calls WHERE key = ? AND ((sent_ms IS NULL AND lease_ms < ?) OR " +
        "(sent_ms < ? AND (done_ms IS NOT NULL OR lease_ms < ?)))",
      key,
      now,
      now - WINDOW_MS,
      now,
    );
  }

  #keyRow(key: string): KeyRow {
    this.#sql.run("INSERT INTO model_limits (key) VALUES (?) ON CONFLICT (key) DO NOTHING", key);
    return this.#sql.get<KeyRow>(
      "SELECT next_ms, sent_ms, last_tokens, blocked_until_ms FROM model_limits WHERE key = ?",
      key,
    )!;
  }
}
