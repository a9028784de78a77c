/** RemotePermits: a `stn worker`'s model-call permits under `ai.limits`, asked of the station over NATS. */

import type { NatsConnection } from "@nats-io/transport-node";
import type { ThrottleWait } from "../agents/model_limits.ts";
import {
  AGENT_MODEL_RELEASED_SUBJECT,
  AGENT_MODEL_SUBJECT,
  type Claim,
  type ModelPermitReply,
  type ModelPermitRequest,
} from "../agents/remote_protocol.ts";
import type { ModelPermits } from "../agents/throttle.ts";
import { stationRequest } from "./station_request.ts";

type Granted = Exclude<ModelPermitReply, { error: unknown }>;

/**
 * The permits of one agent loop's model calls (a step's or a queued run's; docs/workers.md#model-limits): the station decides each on
 * its ledger, so `ai.limits` hold across the station and every worker. A permit is asked for until a station
 * answers (or the run ends) — never skipped; a worker killed while it waits leaves nothing held for long
 * (the station lets its place lapse) and the step's next worker asks again.
 */
export class RemotePermits implements ModelPermits {
  #nc: NatsConnection;
  #claim: Claim;
  #limited: boolean;
  #signal: AbortSignal;

  constructor(o: { nc: NatsConnection; claim: Claim; limited: boolean; signal: AbortSignal }) {
    this.#nc = o.nc;
    this.#claim = o.claim;
    this.#limited = o.limited;
    this.#signal = o.signal;
  }

  limited(): boolean {
    return this.#limited;
  }

  async acquire(id: string, model: string): Promise<ThrottleWait | undefined> {
    return (await this.#ask({ op: "acquire", id, model }, { signal: this.#signal })).wait;
  }

  async renew(id: string): Promise<void> {
    // Renewed every few seconds: a missed one is made up by the next.
    await this.#ask({ op: "renew", id }, { retries: 0 });
  }

  async release(id: string, tokens: number): Promise<void> {
    await this.#ask({ op: "release", id, tokens });
  }

  released(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const sub = this.#nc.subscribe(AGENT_MODEL_RELEASED_SUBJECT, { max: 1, callback: () => resolve() });
      signal.addEventListener("abort", () => sub.unsubscribe(), { once: true });
    });
  }

  async block(model: string, ms: number): Promise<string[]> {
    return (await this.#ask({ op: "block", id: "", model, wait_ms: ms })).keys ?? [];
  }

  #ask(
    req: Omit<ModelPermitRequest, "claim">,
    o?: { signal?: AbortSignal; retries?: number },
  ): Promise<Granted> {
    return stationRequest<Granted>(this.#nc, AGENT_MODEL_SUBJECT, { claim: this.#claim, ...req }, o);
  }
}
