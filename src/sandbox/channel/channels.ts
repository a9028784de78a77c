/** The channels of one backend, one per container, and the fallback to docker exec while one is down. */

import { errorMessage, StationError } from "../../errors.ts";
import { within } from "../../lib/async.ts";
import { log } from "../../log.ts";
import { type ExecContext, killGroup } from "../exec.ts";
import { ChannelConnection, ChannelGone, ChannelUnavailable } from "./connection.ts";

/** How long a container's operations use docker exec after its channel failed, before it is tried again. */
export const CHANNEL_RETRY_MS = 30_000;

interface ChannelState {
  conn?: ChannelConnection;
  opening?: Promise<ChannelConnection | undefined>;
  /** Down: the next open is not tried before this time. */
  retryAt?: number;
  /** The container has no supervisor and never will (made by an older stn): never tried again. */
  absent?: boolean;
}

/**
 * The channels of one backend, one per container, opened on a container's first operation and kept.
 * When a channel cannot be opened or is lost, the container's operations go through docker exec (the
 * caller's fallback) until a retry CHANNEL_RETRY_MS later; the change is logged once each way.
 *
 * Why a lost channel is never left with processes running: the supervisor and everything any command
 * started through it carry the channel's group G (no capability can change it, the same guarantee
 * every docker exec has), and the supervisor's own KILL cannot be relied on once the channel broke.
 * So a lost channel's group is killed over docker exec (killGroup), supervisor included, exactly as a
 * timed-out docker exec's group is.
 */
export class SandboxChannels {
  readonly #ctx: ExecContext;
  readonly #enabled: boolean;
  readonly #retryMs: number;
  readonly #state = new Map<string, ChannelState>();

  constructor(ctx: ExecContext, opts: { enabled: boolean; retryMs?: number }) {
    this.#ctx = ctx;
    this.#enabled = opts.enabled;
    this.#retryMs = opts.retryMs ?? CHANNEL_RETRY_MS;
  }

  /** The container's open channel (opened now if due), or undefined: use docker exec. */
  get(containerId: string): Promise<ChannelConnection | undefined> {
    if (!this.#enabled) return Promise.resolve(undefined);
    let state = this.#state.get(containerId);
    if (!state) this.#state.set(containerId, state = {});
    if (state.conn && !state.conn.gone) return Promise.resolve(state.conn);
    if (state.opening) return state.opening;
    if (state.absent || (state.retryAt !== undefined && Date.now() < state.retryAt)) {
      return Promise.resolve(undefined);
    }
    const opening = this.#open(containerId, state).finally(() => state.opening = undefined);
    state.opening = opening;
    return opening;
  }

  /**
   * Runs op over the container's channel, or fallback when there is none. retry: whether an op the
   * channel lost midway may be done again over docker exec (file operations; never a command).
   */
  async run<T>(
    containerId: string,
    op: (conn: ChannelConnection) => Promise<T>,
    fallback: () => Promise<T>,
    retry: boolean,
  ): Promise<T> {
    const conn = await this.get(containerId);
    if (!conn) return fallback();
    try {
      return await op(conn);
    } catch (err) {
      // ChannelGone: the channel was down before anything was sent, so nothing ran.
      const lost = err instanceof StationError && err.code === "sandbox_channel_lost";
      if (err instanceof ChannelGone || (lost && retry)) return fallback();
      throw err;
    }
  }

  /** Closes a container's channel (its container is going away). */
  forget(containerId: string): void {
    this.#state.get(containerId)?.conn?.close();
    this.#state.delete(containerId);
  }

  /** Closes every channel (they reopen on the next operation). */
  closeAll(): void {
    for (const state of this.#state.values()) state.conn?.close();
    this.#state.clear();
  }

  async #open(containerId: string, state: ChannelState): Promise<ChannelConnection | undefined> {
    const short = containerId.slice(0, 12);
    const wasDown = state.retryAt !== undefined;
    try {
      const conn = await ChannelConnection.open(this.#ctx, containerId);
      conn.onLost = (reason) => this.#lost(containerId, conn, reason);
      if (this.#state.get(containerId) !== state) {
        conn.close(); // the container was forgotten (destroyed) meanwhile
        return undefined;
      }
      state.conn = conn;
      state.retryAt = undefined;
      if (wasDown) log.info("sandbox channel back", { container: short });
      return conn;
    } catch (err) {
      // Forgotten meanwhile: its container was removed while the channel opened; nothing to say.
      if (this.#state.get(containerId) !== state) return undefined;
      // A container that is gone or stopped fails the same way over docker exec, which says so.
      if (containerEnded(err)) {
        if (this.#state.get(containerId) === state) this.#state.delete(containerId);
        return undefined;
      }
      state.absent = err instanceof ChannelUnavailable && err.absent;
      state.retryAt = Date.now() + this.#retryMs;
      if (!wasDown) {
        log.warn(`sandbox channel down, using docker exec: ${errorMessage(err)}`, {
          container: short,
          ...(state.absent ? {} : { retry_in_ms: this.#retryMs }),
        });
      }
      return undefined;
    }
  }

  #lost(containerId: string, conn: ChannelConnection, reason: string): Promise<void> {
    const state = this.#state.get(containerId);
    if (state?.conn === conn) {
      state.conn = undefined;
      state.retryAt = Date.now() + this.#retryMs;
    }
    const container = containerId.slice(0, 12);
    const killed = killGroup(this.#ctx, containerId, conn.group).then(
      () =>
        log.warn(`sandbox channel lost, using docker exec: ${reason}`, {
          container,
          retry_in_ms: this.#retryMs,
        }),
      (err) => {
        // A container that is gone or stopping took the channel and its processes with it: nothing
        // falls back, nothing to say.
        if (containerEnded(err)) {
          if (this.#state.get(containerId) === state) this.#state.delete(containerId);
          return log.debug("sandbox channel ended with its container", { container });
        }
        log.warn(`sandbox channel lost, using docker exec: ${reason}`, {
          container,
          retry_in_ms: this.#retryMs,
        });
        log.warn("killing the processes of a lost sandbox channel failed", {
          container,
          error: errorMessage(err),
        });
      },
    );
    // The requests that were under way hear of the loss once the kill is done (a file operation is
    // then retried over docker exec with no supervisor left to race it), or after the call deadline.
    return within(killed, this.#ctx.callTimeoutMs, () => {});
  }
}

/** Whether an engine error says the container is gone or not running (the engine answers 404, 409 or 500). */
function containerEnded(err: unknown): boolean {
  if (err instanceof StationError && ["sandbox_gone", "sandbox_not_running"].includes(err.code)) return true;
  return /no such container|not running/i.test(errorMessage(err) ?? "");
}
