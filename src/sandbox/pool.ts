/** The warm pool (`sandbox.pool`): containers created ahead of time, so opening a session is quick. */

import { log } from "../log.ts";
import type { SandboxBackend } from "./backend.ts";
import { LABELS } from "./labels.ts";
import { errorMessage } from "../errors.ts";

/** The session label of a pooled container: it belongs to no session until the ledger records one. */
export const POOL_SESSION = "pool";

/** How many ready containers to keep for one image, and how long one may wait before it is replaced. */
export interface PoolSize {
  size: number;
  maxIdleMs: number;
}

interface Ready {
  containerId: string;
  since: number;
}

/**
 * The warm pool (`sandbox.pool`): hardened containers created ahead of time, without a network, so
 * opening a session takes one from here instead of waiting for Docker to create and start one. Taken
 * containers are refilled in the background; idle ones past max_idle are replaced; stop() removes the
 * rest. Pooled containers carry this station's label and no session in the ledger, so the recovery sweep
 * removes any left over by a crash, like every stn container no session owns.
 */
export class WarmPool {
  readonly #backend: SandboxBackend;
  readonly #sizes: Map<string, PoolSize>;
  readonly #stationId: string;
  readonly #ready = new Map<string, Ready[]>();
  readonly #filling = new Map<string, Promise<void>>();
  #timer?: ReturnType<typeof setInterval>;
  #stopped = false;

  /** sizes: image → its pool size (images only; runtime names are resolved by the caller). */
  constructor(backend: SandboxBackend, sizes: Map<string, PoolSize>, stationId: string) {
    this.#backend = backend;
    this.#sizes = sizes;
    this.#stationId = stationId;
  }

  /** Fills every pool in the background and starts replacing containers idle past their max_idle. */
  start(): void {
    for (const image of this.#sizes.keys()) this.#refill(image);
    if (this.#sizes.size === 0) return;
    const everyMs = Math.max(1_000, Math.min(...[...this.#sizes.values()].map((s) => s.maxIdleMs)) / 2);
    this.#timer = setInterval(() => this.#expire(), everyMs);
    Deno.unrefTimer(this.#timer);
  }

  /** A ready container of this image, or undefined when its pool is empty (or it has none); refills it. */
  take(image: string): string | undefined {
    const ready = this.#ready.get(image);
    const taken = ready?.shift();
    if (this.#sizes.has(image)) this.#refill(image);
    return taken?.containerId;
  }

  /** Whether a container is one of this pool's ready ones (not an orphan for the recovery sweep). */
  holds(containerId: string): boolean {
    return [...this.#ready.values()].some((ready) => ready.some((r) => r.containerId === containerId));
  }

  /** Containers ready now, per image. */
  counts(): Record<string, number> {
    return Object.fromEntries(
      [...this.#sizes.keys()].map((image) => [image, this.#ready.get(image)?.length ?? 0]),
    );
  }

  /** Resolves once every pool is full (or its filling gave up on an error). */
  async filled(): Promise<void> {
    while (this.#filling.size > 0) await Promise.all(this.#filling.values());
  }

  /** Stops refilling and removes every container still waiting in a pool. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await Promise.all(this.#filling.values());
    const all = [...this.#ready.values()].flat();
    this.#ready.clear();
    await Promise.all(all.map((r) => this.#backend.destroy(r.containerId).catch(() => {})));
  }

  #refill(image: string): void {
    if (this.#stopped || this.#filling.has(image)) return;
    const size = this.#sizes.get(image)!.size;
    const filling = (async () => {
      const ready = this.#ready.get(image) ?? [];
      this.#ready.set(image, ready);
      while (!this.#stopped && ready.length < size) {
        const containerId = await this.#backend.create({
          image,
          network: false,
          labels: {
            [LABELS.station]: this.#stationId,
            [LABELS.session]: POOL_SESSION,
            [LABELS.scope]: POOL_SESSION,
            [LABELS.createdAt]: new Date().toISOString(),
          },
        });
        if (this.#stopped) {
          await this.#backend.destroy(containerId).catch(() => {});
          return;
        }
        ready.push({ containerId, since: Date.now() });
      }
    })().catch((err) => {
      log.warn("the sandbox pool could not be filled; sessions open cold meanwhile", {
        image,
        error: errorMessage(err),
      });
    }).finally(() => this.#filling.delete(image));
    this.#filling.set(image, filling);
  }

  /** Replaces containers that waited past max_idle (a long-idle container may have been disturbed). */
  #expire(): void {
    for (const [image, ready] of this.#ready) {
      const { maxIdleMs } = this.#sizes.get(image)!;
      const stale = ready.filter((r) => Date.now() - r.since > maxIdleMs);
      if (stale.length === 0) continue;
      for (const r of stale) ready.splice(ready.indexOf(r), 1);
      for (const r of stale) this.#backend.destroy(r.containerId).catch(() => {});
      this.#refill(image);
    }
  }
}
