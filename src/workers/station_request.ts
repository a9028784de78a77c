/** stationRequest: a `stn worker`'s NATS request to its station, retried while no station answers. */

import type { NatsConnection } from "@nats-io/transport-node";
import { type ErrorCode, errorMessage, StationError } from "../errors.ts";
import { sleep } from "../lib/async.ts";

const REQUEST_TIMEOUT_MS = 10_000;
/** How often a request is retried (a second apart) while no station answers (a station restart). */
const RETRIES = 30;

/**
 * A request to the station, retried while none answers: `retries` times (default RETRIES), or with a
 * `signal` until it aborts (a model call waits for its permit however long the station is away). A refusal
 * is thrown as its error.
 */
export async function stationRequest<T>(
  nc: NatsConnection,
  subject: string,
  body: unknown,
  o: { signal?: AbortSignal; retries?: number } = {},
): Promise<T> {
  const { signal, retries = RETRIES } = o;
  for (let tries = 0;; tries++) {
    let reply: T | { error: { code: string; message: string } };
    try {
      reply = (await nc.request(subject, JSON.stringify(body), { timeout: REQUEST_TIMEOUT_MS })).json();
    } catch (err) {
      if (nc.isClosed() || (!signal && tries >= retries)) {
        throw new StationError("station_unreachable", `no station answered ${subject}: ${errorMessage(err)}`);
      }
      await sleep(1000, signal);
      continue;
    }
    if (reply && typeof reply === "object" && "error" in reply) {
      throw new StationError(reply.error.code as ErrorCode, reply.error.message);
    }
    return reply as T;
  }
}
